/**
 * The base of every public error (the classes are in errors.ts, which exports these too), why a lock
 * was lost, and how the messages show a user's values.
 */

/** Base class of every error thrown by nestjs-zk-lock. */
export class ZkLockError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Why a lock was lost:
 * - `lease-expired`: no answer from ZooKeeper for the lease (session timeout less leaseMarginMs), so
 *   the session was ended before the server could expire it: the holder is told before anyone else
 *   can be granted the lock (the session may in fact have lived: a spurious loss is the price);
 * - `session-expired`: the server expired the session;
 * - `disconnected`: disconnected for the whole session timeout (with no lock in use, so no lease);
 * - `closed`: the connection was closed by the application;
 * - `taken-away`: this service took it from a holder still running: at shutdown after
 *   shutdownGraceMs, or at another service's release request (`onReleaseRequest: 'release'`);
 * - `deleted`: its node was deleted by someone else (a forced release request, or by hand);
 * - `given-up`: a leader's term ended because this instance resigned or left the election;
 * - `session-ended`: another end of the session (no new handle could resume it).
 */
export type LockLossReason = 'lease-expired' | 'session-expired' | 'disconnected' | 'closed' | 'taken-away' | 'deleted' | 'given-up' | 'session-ended';

/** What a client refused for want of authentication should be given (a refused lock operation). */
export const AUTHENTICATION_ADVICE =
  'the credentials the servers require: the `sasl` option where they require SASL (zookeeper.sessionRequireClientSASLAuth=true, ' +
  'or enforce.auth.schemes=sasl), or `digest` where enforce.auth.schemes lists digest; and check them against what the servers know';

/** A value given by a user, for an error message: at most 200 characters of it. */
export function shown(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} characters)` : text;
}

/** A duration as a person reads it: whole ms, or one decimal below 10 ms (a measured 2999.99721 is 3000). */
export function forPeople(ms: number): number {
  return ms >= 10 ? Math.round(ms) : Math.round(ms * 10) / 10;
}

export function describe(value: unknown): string {
  if (typeof value !== 'string') return `(a ${value === null ? 'null' : typeof value}, not a string)`;
  const shown = value.length > 60 ? `${value.slice(0, 60)}… (${value.length} characters)` : value;
  return JSON.stringify(shown);
}

import { IntrinsicException } from '@nestjs/common';
import type { LockTimeoutError } from '../errors.js';

/** The machine-readable code every non-HTTP transport answers a busy lock with. */
export const LOCK_BUSY = 'LOCK_BUSY';

/**
 * What an RPC client receives as its error, and a WebSocket client in its `exception` event (and its
 * ack, when it asked for one), when a handler could not get its lock in time.
 */
export interface LockBusyPayload {
  readonly status: 'error';
  readonly code: typeof LOCK_BUSY;
  /** The resource that was busy. */
  readonly resource: string;
  /** For people: which resource, and that trying later may succeed. */
  readonly message: string;
}

/**
 * A handler's lock was busy, in a transport other than HTTP (there the interceptor answers with the
 * module's busyStatus). Thrown by the library's interceptor; its exception filter (both registered by
 * ZkLockModule) turns it into each transport's own answer. An IntrinsicException, because a busy resource is an expected answer: Nest
 * logs no error with a stack for it. `extensions` is what GraphQL puts in the error it returns.
 */
export class LockBusyException extends IntrinsicException {
  readonly resource: string;
  readonly payload: LockBusyPayload;
  /** Read by graphql-js when it wraps a resolver's error: becomes `errors[n].extensions`. */
  readonly extensions: { readonly code: typeof LOCK_BUSY; readonly resource: string };

  constructor(cause: LockTimeoutError) {
    const message = `The resource "${cause.resource}" is locked by another caller; try again later.`;
    super(message, { cause });
    this.name = 'LockBusyException';
    this.resource = cause.resource;
    this.payload = { status: 'error', code: LOCK_BUSY, resource: cause.resource, message };
    this.extensions = { code: LOCK_BUSY, resource: cause.resource };
  }
}

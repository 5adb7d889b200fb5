import {
  IncompatibleLockError,
  InvalidOptionsError,
  type LockLossReason,
  LockOperationError,
  ZkLockError,
  ZkRollbackError,
  ZkSaslError,
  AUTHENTICATION_ADVICE,
} from '../errors.js';
import { saslRequiredError } from './zk-sasl-failure.js';
import { ADVICE, codeName, describeCode, ZK_CODES } from './zk-codes.js';

export { ZK_CODES } from './zk-codes.js';

/**
 * ZooKeeper result codes (zk-codes.ts) mapped to typed errors. Recipes branch on these classes,
 * never on numbers. And the one mapping of these errors to the library's public ones: toLockError
 * (and startupError for the requests start-up makes).
 */

/** Any failed ZooKeeper operation. */
export class ZkError extends Error {
  constructor(
    readonly code: number,
    readonly op: string,
    readonly path: string,
  ) {
    super(`ZooKeeper ${op} ${path} failed: ${describeCode(code)}`);
    this.name = new.target.name;
  }
}

/** The node does not exist. */
export class ZkNoNodeError extends ZkError {}
/** The node already exists. */
export class ZkNodeExistsError extends ZkError {}
/** The parent is an ephemeral node, which can have no children. */
export class ZkNoChildrenForEphemeralsError extends ZkError {}
/** A delete refused because the node still has children. */
export class ZkNotEmptyError extends ZkError {}
/** The ACL forbids the operation, or authentication failed. */
export class ZkNoAuthError extends ZkError {}
/**
 * The session cannot be used without credentials the servers accept: they closed it because it has
 * not authenticated (SESSIONCLOSEDREQUIRESASLAUTH), or its authentication failed (AUTHFAILED, after
 * which the C client gives the handle up). Ends the session (see endOfSession).
 */
export class ZkSessionAuthError extends ZkNoAuthError {
  /** `required`: the servers require an authentication this session has not made; `failed`: it was refused. */
  get failure(): 'required' | 'failed' {
    return this.code === ZK_CODES.SESSIONCLOSEDREQUIRESASLAUTH ? 'required' : 'failed';
  }
}
/**
 * The connection dropped before the reply arrived: the operation may or may not have been applied.
 * The session may still be alive; retry once it reconnects.
 */
export class ZkConnectionLossError extends ZkError {}
/**
 * How the native client's `close` event tells why it closed a handle (its session states
 * ZOO_EXPIRED_SESSION_STATE and ZOO_AUTH_FAILED_STATE, not result codes), as the lost session's
 * detail and end.
 */
export function describeClose(code: number): { detail: string; end: LockLossReason } {
  if (code === -112) return { detail: 'the session expired', end: 'session-expired' };
  return { detail: code === -113 ? 'authentication failed' : `the client closed (${code})`, end: 'session-ended' };
}

/**
 * The session is gone (expired, closed, or declared lost): everything ephemeral it owned is gone.
 * `end` says how, in the words its holders' LockLostError uses (the public LockLossReason, never
 * `'taken-away'`, `'deleted'` or `'given-up'` here): its lease ran out, the server expired it, it stayed disconnected for its whole
 * timeout, the application closed it, or another end (no new handle could resume it).
 */
export class ZkSessionLostError extends ZkError {
  constructor(
    op: string,
    path: string,
    readonly detail = 'the ZooKeeper session was lost',
    readonly end: LockLossReason = 'session-expired',
    /** The servers' refusal for want of authentication that ended the session, if that is how it ended. */
    readonly refusal?: ZkSessionAuthError,
  ) {
    super(ZK_CODES.SESSIONEXPIRED, op, path);
    this.message = `ZooKeeper ${op} ${path} failed: ${detail}`;
  }
}

/**
 * A listing or a node right after our own create showed an older zxid than this connection had seen
 * before: the servers' history went back (see ZxidWatermark). Internal: toLockError turns it into
 * the public ZkRollbackError, which names the resource.
 */
export class HistoryWentBackError extends ZkError {
  constructor(
    path: string,
    readonly seen: number,
    readonly now: number,
    /**
     * What went back: the zxid; the sequence (cversion) of a queue's parent; or the parent itself,
     * now an older incarnation (a lower czxid) than one seen at that path.
     */
    readonly what: RollbackSeen = 'zxid',
  ) {
    super(ZK_CODES.RUNTIMEINCONSISTENCY, 'getChildren', path);
    this.message = `ZooKeeper's history went back at ${path}: ${describeRollback(what, seen, now)}`;
  }
}

/** What showed the history going back (see HistoryWentBackError.what). */
export type RollbackSeen = 'zxid' | 'sequence' | 'queue';

/** What went back, for a message: "zxid 0x... seen before, the server now shows 0x...". */
export function describeRollback(what: RollbackSeen, seen: number, now: number): string {
  switch (what) {
    case 'zxid':
      return `this process has seen zxid 0x${seen.toString(16)}, and a node it created since (or its parent's listing) shows 0x${now.toString(16)}, not higher`;
    case 'sequence':
      return `this process has seen the lock's queue at sequence ${seen}, the server now shows it at ${now}`;
    case 'queue':
      return `this process has seen the lock's queue created at zxid 0x${seen.toString(16)}, the server now shows an older one, created at 0x${now.toString(16)}`;
  }
}

/**
 * Whether a result code came from the server, which therefore had the session alive when it handled
 * the request: success and the per-request refusals (no node, node exists, bad version, no auth...).
 * Not the C client's own codes (connection loss, timeouts, closing) nor a session's end.
 */
export function serverAnswered(rc: number): boolean {
  return SERVER_ANSWERS.has(rc);
}
const SERVER_ANSWERS = new Set<number>([
  ZK_CODES.OK,
  ZK_CODES.NONODE,
  ZK_CODES.NOAUTH,
  ZK_CODES.BADVERSION,
  ZK_CODES.NOCHILDRENFOREPHEMERALS,
  ZK_CODES.NODEEXISTS,
  ZK_CODES.NOTEMPTY,
  ZK_CODES.INVALIDACL,
]);

/** Builds the typed error for a non-zero result code. */
export function zkError(code: number, op: string, path: string): ZkError {
  switch (code) {
    case ZK_CODES.NONODE:
      return new ZkNoNodeError(code, op, path);
    case ZK_CODES.NODEEXISTS:
      return new ZkNodeExistsError(code, op, path);
    case ZK_CODES.NOCHILDRENFOREPHEMERALS:
      return new ZkNoChildrenForEphemeralsError(code, op, path);
    case ZK_CODES.NOTEMPTY:
      return new ZkNotEmptyError(code, op, path);
    case ZK_CODES.NOAUTH:
      return new ZkNoAuthError(code, op, path);
    case ZK_CODES.AUTHFAILED:
    case ZK_CODES.SESSIONCLOSEDREQUIRESASLAUTH:
      return new ZkSessionAuthError(code, op, path);
    case ZK_CODES.CONNECTIONLOSS:
    case ZK_CODES.OPERATIONTIMEOUT:
    case ZK_CODES.SSLCONNECTIONERROR: // the C client fails what was in flight with it when a TLS connect fails
      return new ZkConnectionLossError(code, op, path);
    case ZK_CODES.INVALIDSTATE: // the handle is closed or unrecoverable
    case ZK_CODES.SESSIONEXPIRED:
    case ZK_CODES.CLOSING:
    case ZK_CODES.SESSIONMOVED:
      return new ZkSessionLostError(op, path, `the session ended (${describeCode(code)})`);
    default:
      return new ZkError(code, op, path);
  }
}

/**
 * The path holds nodes this lock cannot share it with: a lock and a semaphore on one resource,
 * semaphores that disagree about their permits, another layout's nodes, a simple lock's node.
 * Internal: toLockError turns it into the public IncompatibleLockError, which names the resource.
 */
export class QueueConflictError extends Error {
  constructor(
    readonly detail: string,
    /** What the caller should do, when not the usual "one kind of lock per name". */
    readonly advice?: string,
  ) {
    super(detail);
    this.name = 'QueueConflictError';
  }
}

/**
 * How an error from a request ends its session, if it does: the session is over (expired, closed,
 * moved), or the servers will not serve it without authentication. The session's holders are told
 * this detail; the request's caller gets the error itself.
 */
export function endOfSession(error: unknown): SessionEnd | undefined {
  if (error instanceof ZkSessionLostError) return { detail: error.message, end: error.end };
  if (error instanceof ZkSessionAuthError) {
    const what = error.failure === 'required' ? 'the servers closed the session because it had not authenticated' : "the session's authentication failed";
    return { detail: `${what} (${describeCode(error.code)})`, end: 'session-ended', refusal: error };
  }
  return undefined;
}

/** How a session ended: in a few words, the public reason, and the servers' refusal when that was it. */
export interface SessionEnd {
  detail: string;
  end: LockLossReason;
  refusal?: ZkSessionAuthError;
}

/** The refusal for want of authentication behind an error: its own, or the one that ended its session. */
function refusalOf(error: unknown): ZkSessionAuthError | undefined {
  if (error instanceof ZkSessionAuthError) return error;
  return error instanceof ZkSessionLostError ? error.refusal : undefined;
}

/**
 * The public error a caller of `resource` gets for an error from ZooKeeper or the queue: the
 * library's own errors pass through, the internal ones become LockOperationError (with ZooKeeper's
 * name of the code and what to do about it), InvalidOptionsError (an ACL the servers refuse),
 * IncompatibleLockError or ZkRollbackError. Anything else is returned as it is.
 */
export function toLockError(error: unknown, resource: string): unknown {
  if (error instanceof ZkLockError) return error;
  if (error instanceof QueueConflictError) return new IncompatibleLockError(resource, error.detail, error.advice);
  if (error instanceof HistoryWentBackError) return new ZkRollbackError(resource, describeRollback(error.what, error.seen, error.now));
  if (!(error instanceof ZkError)) return error;
  // A session the servers ended for want of authentication: what to do is what the refusal says.
  return fromZooKeeper(refusalOf(error) ?? error, resource);
}

function fromZooKeeper(error: ZkError, resource: string): ZkLockError {
  const name = codeName(error.code);
  if (name === 'INVALIDACL') return new InvalidOptionsError('acl', `${error.message}: ${ADVICE.INVALIDACL}`);
  // A session's end says why in its own words; an unknown code is a newer server's.
  const advice =
    error instanceof ZkSessionLostError
      ? undefined
      : name === undefined || name === 'OK'
        ? 'see KeeperException.Code of the servers\' ZooKeeper version for what it means'
        : ADVICE[name];
  const detail = advice === undefined ? error.message : `${error.message}: ${advice}`;
  return new LockOperationError(resource, detail, { cause: error, code: name ?? String(error.code) });
}

/**
 * The public error for a request that start-up makes (creating rootPath, reading its ACL): a refusal
 * for want of authentication fails start-up as a ZkSaslError, as connect's own probe does (see
 * ZkConnection); anything else as toLockError says, for rootPath.
 */
export function startupError(error: unknown, connectionString: string, rootPath: string): unknown {
  const refusal = refusalOf(error);
  if (refusal?.failure === 'required') return saslRequiredError(connectionString);
  if (refusal) {
    return new ZkSaslError(connectionString, 'rejected', undefined, `${describeCode(refusal.code)} at ${refusal.op} ${refusal.path}`, `Give ${AUTHENTICATION_ADVICE}.`);
  }
  return toLockError(error, rootPath);
}

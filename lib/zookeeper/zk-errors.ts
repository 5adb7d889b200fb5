import { IncompatibleLockError, type LockLossReason, LockOperationError, ZkLockError, ZkRollbackError } from '../errors.js';

/**
 * ZooKeeper result codes mapped to typed errors. Recipes branch on these classes, never on numbers.
 * Codes are the C client's (zookeeper.h), which the `zookeeper` binding passes through. And the one
 * mapping of these errors to the library's public ones: toLockError.
 */

export const ZK_CODES = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  INVALIDSTATE: -9,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  CLOSING: -116,
  NOTHING: -117,
  SESSIONMOVED: -118,
} as const;

const NAMES = new Map<number, string>(Object.entries(ZK_CODES).map(([name, code]) => [code, name]));

/** Any failed ZooKeeper operation. */
export class ZkError extends Error {
  constructor(
    readonly code: number,
    readonly op: string,
    readonly path: string,
  ) {
    super(`ZooKeeper ${op} ${path} failed: ${NAMES.get(code) ?? 'UNKNOWN'} (${code})`);
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
 * `'revoked'` here): its lease ran out, the server expired it, it stayed disconnected for its whole
 * timeout, the application closed it, or another end (no new handle could resume it).
 */
export class ZkSessionLostError extends ZkError {
  constructor(
    op: string,
    path: string,
    readonly detail = 'the ZooKeeper session was lost',
    readonly end: LockLossReason = 'session-expired',
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
      return `this process has seen zxid 0x${seen.toString(16)}, the server now shows 0x${now.toString(16)}`;
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
    case ZK_CODES.AUTHFAILED:
      return new ZkNoAuthError(code, op, path);
    case ZK_CODES.CONNECTIONLOSS:
    case ZK_CODES.OPERATIONTIMEOUT:
      return new ZkConnectionLossError(code, op, path);
    case ZK_CODES.INVALIDSTATE: // the handle is closed or unrecoverable
    case ZK_CODES.SESSIONEXPIRED:
    case ZK_CODES.CLOSING:
    case ZK_CODES.SESSIONMOVED:
      return new ZkSessionLostError(op, path, `the session ended (${NAMES.get(code)})`);
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
 * The public error a caller of `resource` gets for an error from ZooKeeper or the queue: the
 * library's own errors pass through, the internal ones become LockOperationError,
 * IncompatibleLockError or ZkRollbackError with what to do. Anything else is returned as it is.
 */
export function toLockError(error: unknown, resource: string): unknown {
  if (error instanceof ZkLockError) return error;
  if (error instanceof QueueConflictError) return new IncompatibleLockError(resource, error.detail, error.advice);
  if (error instanceof HistoryWentBackError) return new ZkRollbackError(resource, describeRollback(error.what, error.seen, error.now));
  if (error instanceof ZkNoAuthError) {
    return new LockOperationError(
      resource,
      `${error.message}: the ACL of the lock's path does not let this client in; connect with the digest identity that owns rootPath (the digest option), or use another rootPath`,
      { cause: error },
    );
  }
  if (error instanceof ZkError) return new LockOperationError(resource, error.message, { cause: error });
  return error;
}

/**
 * Every error the library throws at its users, with messages that say what happened and what to do.
 * The ZooKeeper layer's own errors (lib/zookeeper/zk-errors.ts) stay internal: the lock layer turns
 * them into one of these.
 */

/** Base class of every error thrown by nestjs-zk-lock. */
export class ZkLockError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `acquire` waited `waitTimeoutMs` and the lock was still held by someone else. */
export class LockTimeoutError extends ZkLockError {
  constructor(
    readonly resource: string,
    readonly waitTimeoutMs: number,
  ) {
    super(
      `Timed out after ${forPeople(waitTimeoutMs)} ms waiting for the lock on "${resource}". ` +
        'Another holder kept it for longer. Raise waitTimeoutMs, use tryAcquire to skip busy work, ' +
        'or look at who holds it (its lock node under rootPath names the session).',
    );
  }
}

/** The AbortSignal passed to `acquire` fired before the lock was granted. Nothing was left behind. */
export class LockAbortedError extends ZkLockError {
  constructor(
    readonly resource: string,
    reason: unknown,
  ) {
    super(`Waiting for the lock on "${resource}" was aborted by the caller's signal; the queue entry was removed.`, {
      cause: reason,
    });
  }
}

/**
 * The lock is no longer held: its ZooKeeper session expired or was declared lost (disconnected for
 * longer than the session timeout). Another client may hold it now. Stop work that needs exclusivity;
 * writes guarded by the fencing token will be refused by a store that checks it.
 */
export class LockLostError extends ZkLockError {
  constructor(
    readonly resource: string,
    readonly fencingToken: string,
    detail: string,
  ) {
    super(
      `The lock on "${resource}" (fencing token ${fencingToken}) was lost: ${detail}. ` +
        'Another client may hold it now: stop the protected work, and guard writes with the fencing token.',
    );
  }
}

/** `release()` was called on a handle that was already released (or is being released). */
export class LockNotHeldError extends ZkLockError {
  constructor(readonly resource: string) {
    super(
      `The lock on "${resource}" is not held by this handle: it was already released. ` +
        'Release each handle once (withLock does it for you).',
    );
  }
}

/** A resource name cannot be turned into a lock node. */
export class InvalidResourceNameError extends ZkLockError {
  constructor(
    readonly resource: unknown,
    readonly reason: string,
  ) {
    super(`Invalid lock resource name ${describe(resource)}: ${reason}.`);
  }
}

/** ZooKeeper could not be reached, or the connection string is unusable. */
export class ZkConnectionError extends ZkLockError {
  constructor(
    readonly connectionString: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Could not connect to ZooKeeper at "${connectionString}": ${detail}. ` +
        'Check that the servers are running and reachable from this host (try `echo srvr | nc HOST PORT`), ' +
        'and that connectionString is a comma-separated list of host:port pairs.',
      options,
    );
  }
}

/** The module or a recipe was given an option it cannot use. */
export class InvalidOptionsError extends ZkLockError {
  constructor(
    readonly option: string,
    detail: string,
  ) {
    super(`Invalid nestjs-zk-lock option "${option}": ${detail}.`);
  }
}

/**
 * The lock service was used after the application started shutting down, or shut down while the
 * call still waited for the lock (its queue entry goes with the session).
 */
export class LockServiceClosedError extends ZkLockError {
  constructor(
    readonly resource: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Cannot lock "${resource}": the lock service is shut down (the application is stopping). ` +
        'Retry the work where the application still runs (another instance, or after restart).',
      options,
    );
  }
}

/** ZooKeeper refused a lock operation for a reason the library cannot recover from. */
export class LockOperationError extends ZkLockError {
  constructor(resource: string, detail: string, options?: { cause?: unknown }) {
    super(`ZooKeeper refused a lock operation on "${resource}": ${detail}.`, options);
  }
}

/**
 * The resource's queue holds entries another kind of lock made: a lock and a semaphore on one name,
 * the simple lock and a queue-based lock on one name, or semaphores that disagree about their permits.
 */
export class IncompatibleLockError extends ZkLockError {
  constructor(
    readonly resource: string,
    detail: string,
  ) {
    super(
      `Cannot lock "${resource}": ${detail}. ` +
        'Use one kind of lock per resource name (or different names for different kinds).',
    );
  }
}

/**
 * A context that holds only the read lock asked for the write lock on the same resource. It could
 * never be granted (the write waits for every read below it, its own included), so it fails at once.
 */
export class LockUpgradeError extends ZkLockError {
  constructor(readonly resource: string) {
    super(
      `Cannot take the write lock on "${resource}" while this request or call holds its read lock: ` +
        'the write would wait for the read forever. Release the read lock first, or take the write lock ' +
        'from the start (holding the write, a read is granted at once).',
    );
  }
}

/** A duration as a person reads it: whole ms, or one decimal below 10 ms (a measured 2999.99721 is 3000). */
function forPeople(ms: number): number {
  return ms >= 10 ? Math.round(ms) : Math.round(ms * 10) / 10;
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return `(a ${value === null ? 'null' : typeof value}, not a string)`;
  const shown = value.length > 60 ? `${value.slice(0, 60)}… (${value.length} characters)` : value;
  return JSON.stringify(shown);
}

/**
 * Every error the library throws at its users, with messages that say what happened and what to do.
 * The ZooKeeper layer's own errors (lib/zookeeper/zk-errors.ts) stay internal: the lock layer turns
 * them into one of these.
 */

import { AUTHENTICATION_ADVICE, describe, forPeople, type LockLossReason, shown, ZkLockError } from './error-base.js';

export { AUTHENTICATION_ADVICE, type LockLossReason, shown, ZkLockError };

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
 * The lock is no longer held: its session's lease ran out, or the session expired or was declared
 * lost. Another client may hold it now. Stop work that needs exclusivity; writes guarded by the
 * fencing token will be refused by a store that checks it. `reason` says which.
 */
export class LockLostError extends ZkLockError {
  constructor(
    readonly resource: string,
    readonly fencingToken: string,
    /** What happened, in a few words (the message adds what to do). */
    readonly detail: string,
    readonly reason: LockLossReason = 'session-ended',
  ) {
    super(
      `The lock on "${resource}" (fencing token ${fencingToken}) was lost: ${detail}. ` +
        'Another client may hold it now: stop the protected work, and guard writes with the fencing token.',
    );
  }
}

/**
 * How a term of leadership ended: `lost` as a lock is lost (see LockLossReason), `resigned` by
 * `Election.resign()` (or a failing `@OnLeadership` method), `left` by `close()` or shutdown.
 */
export type LeadershipEnd = 'lost' | 'resigned' | 'left';

/**
 * This instance no longer leads the group: the leader's `signal` aborts with it, and `assertHeld`
 * throws it. A LockLostError, so code that handles lost locks handles it too; `end` says whether it
 * was lost or given up, `reason` how (`given-up` when given up).
 */
export class LeadershipLostError extends LockLostError {
  constructor(
    readonly group: string,
    fencingToken: string,
    detail: string,
    reason: LockLossReason,
    readonly end: LeadershipEnd,
  ) {
    super(group, fencingToken, detail, reason);
    this.message =
      `Leadership of "${group}" (fencing token ${fencingToken}) ended: ${detail}. ` +
      (end === 'lost'
        ? 'Another instance may lead now: stop the leader\'s work, and guard its writes with the fencing token.'
        : 'Stop the leader\'s work now: the next participant leads once this one has left the queue.');
  }
}

/** The election was closed (`close()`, or the application is stopping): this instance no longer takes part. */
export class ElectionClosedError extends ZkLockError {
  constructor(readonly group: string) {
    super(
      `The election "${group}" is closed (close() was called, or the application is stopping): this instance no longer takes part. ` +
        'Call LockService.elect again to join anew.',
    );
  }
}

/**
 * ZooKeeper's history went back: this process saw newer zxids, or a lock's queue further on, than
 * the servers now show, so they were restored from a backup or started with an empty data directory.
 * Fencing tokens would go backwards, and a store that saw the old ones would refuse the real holder:
 * no lock is granted until an operator raises `tokenEpoch` and restarts the process. Detected only
 * by a process that saw the newer history: the epoch is what keeps every process's tokens growing.
 */
export class ZkRollbackError extends ZkLockError {
  constructor(
    readonly resource: string,
    /** What this process saw, and what the server shows now. */
    detail: string,
  ) {
    super(
      `Refusing the lock on "${resource}": ZooKeeper's history went back (${detail}), so it was restored from a backup or ` +
        'started with an empty data directory, and fencing tokens would go backwards. Raise the tokenEpoch option (the same ' +
        'in every application that shares these locks) and restart this process; see "Restoring ZooKeeper" in the docs.',
    );
  }
}

/**
 * Another service asked the holder to release the lock (LockService.requestRelease, the CLI's
 * `revoke`, or Curator's `Revoker.attemptRevoke`): the reason of a revocable handle's
 * `releaseRequested` signal. The lock is still held; finish or stop the work, then release it.
 */
export class LockReleaseRequestedError extends ZkLockError {
  constructor(readonly resource: string) {
    super(`Another service asked for the lock on "${resource}" to be released: finish or stop the protected work, then release it.`);
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
    super(`Invalid lock ${reason.startsWith('zkPath ') ? 'path' : 'resource name'} ${describe(resource)}: ${reason}.`);
  }
}

/** ZooKeeper could not be reached, or the connection string is unusable. */
export class ZkConnectionError extends ZkLockError {
  constructor(
    readonly connectionString: string,
    detail: string,
    options?: { cause?: unknown; advice?: string },
  ) {
    super(
      `Could not connect to ZooKeeper at ${shown(connectionString)}: ${detail}. ` +
        (options?.advice ??
          'Check that the servers are running and reachable from this host (try `echo srvr | nc HOST PORT`), ' +
            'and that connectionString is a comma-separated list of host:port pairs.'),
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/**
 * Start-up failed on TLS: a server's certificate is not trusted (`server-not-trusted`), a server
 * refused this client's certificate or wanted one (`client-refused`), the `tls` option points at a
 * port that does not speak TLS (`not-tls`), a port that speaks TLS only was reached without it
 * (`tls-required`), or a server's certificate does not name the host it was reached by
 * (`hostname-mismatch`, with `tls.verifyHostname`; the message lists the names it holds). Found by
 * a TLS handshake the library makes itself (the C client retries a failed handshake forever and
 * says nothing), within connectTimeoutMs, when no server could be connected to. A ZkConnectionError.
 */
export class ZkTlsError extends ZkConnectionError {
  constructor(
    connectionString: string,
    /** The server whose handshake failed: `host:port` as reached (a host name is followed by its address). */
    readonly server: string,
    readonly failure: 'server-not-trusted' | 'client-refused' | 'not-tls' | 'tls-required' | 'hostname-mismatch',
    detail: string,
    advice: string,
  ) {
    super(connectionString, `TLS with ${server} failed (${failure}: ${detail})`, { advice });
  }
}

/**
 * SASL authentication failed, so no session was opened (at start-up, within connectTimeoutMs), or a
 * session could not authenticate again (its locks are then lost, as on any session loss). `failure`:
 * - `rejected`: the server refused the credentials (a wrong user, password or principal, or a server
 *   set up for another mechanism);
 * - `required`: the server requires SASL (`zookeeper.sessionRequireClientSASLAuth=true` or
 *   `enforce.auth.schemes=sasl`) and the `sasl` option is not set;
 * - `client-failed`: this client could not take part (no Kerberos library or credentials, a server
 *   that could not prove it knows the DIGEST-MD5 password); `detail` says which.
 * A ZkConnectionError.
 */
export class ZkSaslError extends ZkConnectionError {
  constructor(
    connectionString: string,
    readonly failure: 'rejected' | 'required' | 'client-failed',
    /** The mechanism configured, or undefined (`required`). */
    readonly mechanism: string | undefined,
    detail: string,
    advice: string,
  ) {
    super(connectionString, `SASL authentication failed (${failure}: ${detail})`, { advice });
  }
}

/**
 * This package's native addon (the ZooKeeper C client bound to Node: the prebuilt binary the package
 * ships for linux-x64 and linux-arm64 with glibc, or a build made by its install script) cannot be used, so no connection to
 * ZooKeeper can be opened. Thrown at the first connect. `detail` says what is missing: no local
 * build, and no prebuilt binary for this platform, or one built for another Node.js version.
 */
export class ZkNativeAddonError extends ZkLockError {
  constructor(readonly detail: string) {
    super(
      `nestjs-zk-lock cannot talk to ZooKeeper: its native addon cannot be used, because ${detail}. ` +
        'To build the addon on this machine: install python3, make and g++ (Debian/Ubuntu: `apt-get install python3 make g++`; ' +
        'Alpine: `apk add python3 make g++`; macOS: `xcode-select --install`), let npm run the package\'s install script ' +
        '(where install scripts are denied: "allowScripts": { "nestjs-zk-lock": true }), then run `npm rebuild nestjs-zk-lock` and read its output.',
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

/**
 * ZooKeeper refused a lock operation for a reason the library cannot recover from. The message says
 * what to do; `code` is ZooKeeper's name of the result (`'NOAUTH'`, `'QUOTAEXCEEDED'`,
 * `'THROTTLEDOP'`...: see docs/reference.md, ZooKeeper's answers).
 */
export class LockOperationError extends ZkLockError {
  /** ZooKeeper's name of the result code (KeeperException.Code), or the number of one it does not name. */
  readonly code: string | undefined;
  constructor(resource: string, detail: string, options?: { cause?: unknown; code?: string }) {
    super(`ZooKeeper refused a lock operation on "${resource}": ${detail}.`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code;
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
    advice = 'Use one kind of lock per resource name (or different names for different kinds).',
  ) {
    super(`Cannot lock "${resource}": ${detail}. ${advice}`);
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

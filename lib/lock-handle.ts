/** A held lock. Returned by `acquire`, passed to the `withLock` callback. */
export interface LockHandle {
  /** The resource name as the caller gave it. */
  readonly resource: string;
  /**
   * Grows with every grant of this resource, across holders, sessions and re-creations of the lock's
   * node. 20 decimal digits, zero-padded: compare tokens as strings (`a < b`) or as `BigInt(token)`;
   * both orders agree. Send it with every write the lock protects, and have the store refuse a token
   * lower than the highest it has seen: that is what keeps a paused, expired holder from writing.
   */
  readonly fencingToken: string;
  /**
   * Aborted when the lock is lost (session expired, or disconnected for longer than the session
   * timeout); `signal.reason` is a LockLostError. Not aborted by a normal release.
   */
  readonly signal: AbortSignal;
  /** True until released or lost. */
  isHeld(): boolean;
  /**
   * Deletes the lock node, retrying through connection loss, and resolves once ZooKeeper confirmed
   * it (or the session, and with it the node, is gone).
   * @throws LockNotHeldError when called a second time.
   * @throws LockLostError when the lock was already lost (nothing is left to release).
   */
  release(): Promise<void>;
}

/** Options of one acquire. */
export interface AcquireOptions {
  /**
   * How long to wait for the lock, in ms. `0` means do not wait (like tryAcquire, but throwing).
   * Absent: the module's defaultWaitTimeoutMs, which by default waits forever.
   */
  waitTimeoutMs?: number;
  /** Aborting it stops waiting with a LockAbortedError and removes the queue entry. */
  signal?: AbortSignal;
}

/** What a guarded handler may read about the lock it runs under (releasing is the guard's job). */
export type HeldLockInfo = Pick<LockHandle, 'resource' | 'fencingToken' | 'signal' | 'isHeld'>;

/** A held lock. Returned by `acquire`, passed to the `withLock` callback. */
export interface LockHandle {
  /** The resource name as the caller gave it. */
  readonly resource: string;
  /**
   * Grows with every grant of this resource, across holders, sessions and re-creations of the lock's
   * node, and with every holder a grant serves within one process. 40 decimal digits, zero-padded
   * (see tokenEpoch):
   * compare tokens as strings (`a < b`) or as `BigInt(token)`;
   * both orders agree. Send it with every write the lock protects, and have the store refuse a token
   * lower than the highest it has seen: that is what keeps a paused, expired holder from writing.
   */
  readonly fencingToken: string;
  /**
   * Aborted when the lock is lost (its session's lease ran out, the session expired, or it stayed
   * disconnected for longer than the session timeout); `signal.reason` is a LockLostError, whose
   * message says which. Not aborted by a normal release.
   */
  readonly signal: AbortSignal;
  /**
   * Aborted when another service asks for this lock to be released (LockService.requestRelease, the
   * CLI's `revoke`, Curator's `Revoker.attemptRevoke`), with a LockReleaseRequestedError; the lock is
   * still held. Only locks taken with `onReleaseRequest` listen for requests: for others it never aborts.
   */
  readonly releaseRequested: AbortSignal;
  /**
   * Until when, on `performance.now()`'s clock (`performance.timeOrigin + validUntil` for a Date),
   * ZooKeeper cannot have granted this lock to anyone else: the lease of its session, renewed by
   * every answer from ZooKeeper. When it passes without renewal, `signal` aborts. -Infinity once
   * released or lost (taken away included).
   */
  readonly validUntil: number;
  /** True until released or lost, and while its lease runs (see validUntil). */
  isHeld(): boolean;
  /**
   * Call it right before a write the lock protects: returns when the lock is held and its lease has
   * at least `forMs` ms left (enough for the write to land), throws otherwise. It reads the clock
   * itself, so it holds even when a busy event loop delays the `signal`.
   * @param forMs how much of the lease must be left, in ms. @default 0
   * @throws LockLostError when the lock was lost or its lease has less than forMs left.
   * @throws InvalidOptionsError when forMs is not less than the whole lease (sessionTimeoutMs less
   *   leaseMarginMs, as granted): no moment would have that much left.
   * @throws LockNotHeldError when the handle was released.
   */
  assertHeld(forMs?: number): void;
  /**
   * Deletes the lock node, retrying through connection loss, and resolves once ZooKeeper confirmed it.
   * @throws LockNotHeldError when called a second time.
   * @throws LockLostError when the lock was already lost, or the session turns out to have ended
   *   before the delete got through (a holder paused past its session timeout learns it here at the
   *   latest): the node was deleted by ZooKeeper, and someone else may have held the lock meanwhile.
   */
  release(): Promise<void>;
}

/** What a guarded handler may read about the lock it runs under (releasing is the guard's job). */
export type HeldLock = Pick<LockHandle, 'resource' | 'fencingToken' | 'signal' | 'releaseRequested' | 'isHeld' | 'validUntil' | 'assertHeld'>;

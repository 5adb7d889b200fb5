import { LockLostError, LockNotHeldError } from '../errors.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import { ForwardingHandle } from '../recipes/forwarding-handle.js';

/**
 * `holdAtLeastMs`: a lock released before its minimum hold is over stays held until the end of it,
 * in the background, so that a short run keeps instances whose clocks fire later from taking the lock
 * for the same tick (ShedLock's `lockAtLeastFor`). The caller's `release()` resolves at once. A lost
 * lock ends the hold, and so does shutdown (releaseAll): neither waits for the deadline.
 */
export class MinimumHolds {
  /** The locks released by their callers and still held: each one's "release now". */
  private readonly lingering = new Set<() => Promise<void>>();
  private closing = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  /** The handle the caller gets: the same lock, whose release waits for `holdAtLeastMs` after now. */
  wrap(handle: LockHandle, holdAtLeastMs: number): LockHandle {
    return new MinimumHoldHandle(handle, performance.now() + holdAtLeastMs, this);
  }

  /** Releases `handle` at `until` (`performance.now()`'s clock), or at once when that has passed or shutdown began. */
  releaseAt(handle: LockHandle, until: number): Promise<void> {
    const left = until - performance.now();
    if (left <= 0 || this.closing || handle.signal.aborted) return handle.release();
    let timer: NodeJS.Timeout | undefined;
    const releaseNow = async (): Promise<void> => {
      if (!this.lingering.delete(releaseNow)) return; // already released
      clearTimeout(timer);
      handle.signal.removeEventListener('abort', onLost);
      try {
        await handle.release();
      } catch (error) {
        if (!(error instanceof LockLostError)) this.onError(error); // a lost lock has nothing left to give back
      }
    };
    const onLost = (): void => void releaseNow();
    this.lingering.add(releaseNow);
    timer = setTimeout(onLost, left);
    timer.unref(); // a hold alone does not keep the process up: its session's end frees the lock
    handle.signal.addEventListener('abort', onLost, { once: true });
    return Promise.resolve();
  }

  /** Shutdown began: every lock still in its minimum hold is released now, and later ones at once. */
  async releaseAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.lingering].map((releaseNow) => releaseNow()));
  }
}

/** The caller's handle of a lock with a minimum hold: released for the caller at once, for ZooKeeper at the deadline. */
class MinimumHoldHandle extends ForwardingHandle {
  private released = false;

  constructor(
    inner: LockHandle,
    private readonly until: number,
    private readonly holds: MinimumHolds,
  ) {
    super(inner);
  }

  override get validUntil(): number {
    return this.released ? Number.NEGATIVE_INFINITY : this.inner.validUntil;
  }

  override isHeld(): boolean {
    return !this.released && this.inner.isHeld();
  }

  override assertHeld(forMs?: number): void {
    if (this.released) throw new LockNotHeldError(this.resource);
    this.inner.assertHeld(forMs);
  }

  release(): Promise<void> {
    if (this.released) return Promise.reject(new LockNotHeldError(this.resource));
    this.released = true;
    return this.holds.releaseAt(this.inner, this.until);
  }
}

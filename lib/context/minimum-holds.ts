import { LockLostError } from '../errors.js';

/**
 * `holdAtLeastMs`: a lock released before its minimum hold is over stays held until the end of it,
 * in the background, so that a short run keeps instances whose clocks fire later from taking the lock
 * for the same tick (ShedLock's `lockAtLeastFor`). The caller's `release()` resolves at once (the
 * HolderHandle's first hook). A lost lock ends the hold, and so does shutdown (releaseAll): neither
 * waits for the deadline.
 */
export class MinimumHolds {
  /** The locks released by their callers and still held: each one's "release now". */
  private readonly lingering = new Set<() => Promise<void>>();
  private closing = false;

  constructor(private readonly onError: (error: unknown) => void) {}

  /**
   * Runs `release` at `until` (`performance.now()`'s clock), or at once when that has passed,
   * shutdown began or the lock (`held.signal`) is lost. Resolves at once when it waits.
   */
  releaseAt(held: { readonly signal: AbortSignal }, until: number, release: () => Promise<void>): Promise<void> {
    const left = until - performance.now();
    if (left <= 0 || this.closing || held.signal.aborted) return release();
    let timer: NodeJS.Timeout | undefined;
    const releaseNow = async (): Promise<void> => {
      if (!this.lingering.delete(releaseNow)) return; // already released
      clearTimeout(timer);
      held.signal.removeEventListener('abort', onLost);
      try {
        await release();
      } catch (error) {
        if (!(error instanceof LockLostError)) this.onError(error); // a lost lock has nothing left to give back
      }
    };
    const onLost = (): void => void releaseNow();
    this.lingering.add(releaseNow);
    timer = setTimeout(onLost, left);
    timer.unref(); // a hold alone does not keep the process up: its session's end frees the lock
    held.signal.addEventListener('abort', onLost, { once: true });
    return Promise.resolve();
  }

  /** Shutdown began: every lock still in its minimum hold is released now, and later ones at once. */
  async releaseAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.lingering].map((releaseNow) => releaseNow()));
  }
}

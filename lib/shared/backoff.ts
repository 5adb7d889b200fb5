/**
 * The one backoff of the elections: a pause that doubles with each failure in a row, from `firstMs`
 * up to `maxMs`. Used by a candidacy's retry after a failure that may pass, a failing leader's
 * pause before it queues again, a term's attempts to delete its node, and the wait before a failed
 * election is joined anew.
 */
export class Backoff {
  private failures = 0;
  /** When the last failure was recorded, on performance.now()'s clock. */
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
    /** A failure this long after the last one starts the count again, in ms (never, by default). */
    private readonly forgetAfterMs = Number.POSITIVE_INFINITY,
  ) {}

  /** Records a failure and returns the pause before the next attempt, in ms. */
  next(): number {
    const now = performance.now();
    this.failures = now - this.lastAt < this.forgetAfterMs ? this.failures + 1 : 1;
    this.lastAt = now;
    return Math.min(this.maxMs, this.firstMs * 2 ** (this.failures - 1));
  }

  /** Failures in a row so far. */
  get count(): number {
    return this.failures;
  }

  /** A success: the next failure pauses `firstMs` again. */
  reset(): void {
    this.failures = 0;
    this.lastAt = Number.NEGATIVE_INFINITY;
  }
}

/** Something that waits in a WaitingLine; `done` once answered, by whoever answered it. */
export interface LineWaiter {
  done: boolean;
}

/**
 * First come, first served, for the callers of one process waiting for one lock (the cohort's
 * local queue). A waiter that gave up stays in the array, marked `done`, and is skipped: leaving
 * costs no search. `live` counts those not done.
 */
export class WaitingLine<W extends LineWaiter> {
  private readonly waiters: W[] = [];
  private head = 0;
  /** Waiters in line not yet answered. */
  live = 0;

  push(waiter: W): void {
    this.waiters.push(waiter);
    this.live++;
  }

  /** One waiter answered (or leaving), before or after it was taken from the line. */
  retire(waiter: W): void {
    waiter.done = true;
    this.live--;
  }

  /** The first waiter not done, left in line. */
  peek(): W | undefined {
    while (this.head < this.waiters.length && this.waiters[this.head]!.done) this.head++;
    return this.waiters[this.head];
  }

  /** The first waiter not done, taken from the line. */
  next(): W | undefined {
    const waiter = this.peek();
    if (waiter) this.head++;
    // Drop the answered head once it is most of the array, so a busy lock's line does not grow.
    if (this.head > 64 && this.head * 2 > this.waiters.length) {
      this.waiters.splice(0, this.head);
      this.head = 0;
    }
    return waiter;
  }
}

/**
 * Resolves when something calls the callback this adds to `waiters` (the owner wakes the whole set),
 * or rejects with `signal.reason` when the signal aborts first, leaving nothing in the set.
 */
export function waitInSet(waiters: Set<() => void>, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      waiters.delete(wake);
      reject(signal?.reason);
    };
    const wake = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiters.add(wake);
  });
}

/**
 * `run()`, with a synchronous throw (bad options, a closed service) turned into a rejection. The
 * acquire paths use it instead of `async` functions: a waiting acquire then keeps no suspended call,
 * only its promise, and the callback given here is not kept either.
 */
export function rejectOnThrow<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

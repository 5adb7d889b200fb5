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

import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockAbortedError, LockTimeoutError } from '../../lib/errors.js';
import { boundWait, stopperFor } from '../../lib/queue/stopper.js';

/** A signal that counts the abort listeners added to it and still there. */
function countedSignal(): { signal: AbortSignal; controller: AbortController; listening: () => number } {
  const controller = new AbortController();
  const { signal } = controller;
  let listening = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => (listening++, add(...args))) as AbortSignal['addEventListener'];
  signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => (listening--, remove(...args))) as AbortSignal['removeEventListener'];
  return { signal, controller, listening: () => listening };
}

describe('bounding a wait (the one way: stopperFor, boundWait)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('costs no stopper when there is neither a timeout nor a signal', async () => {
    expect(stopperFor(undefined, undefined)).toBeUndefined();
    expect(stopperFor(5, undefined)).toBeDefined(); // control: a timeout needs one
    stopperFor(5, undefined)!.dispose();
    await expect(boundWait(Promise.resolve(7), undefined, undefined, 'r')).resolves.toBe(7);
  });

  it('ends at the timeout with LockTimeoutError, and at the signal with LockAbortedError', async () => {
    vi.useFakeTimers();
    const timed = boundWait(new Promise<never>(() => undefined), 50, undefined, 'r');
    const expectation = expect(timed).rejects.toBeInstanceOf(LockTimeoutError);
    await vi.advanceTimersByTimeAsync(50);
    await expectation;
    const { signal, controller } = countedSignal();
    const aborted = boundWait(new Promise<never>(() => undefined), undefined, signal, 'r');
    controller.abort(new Error('caller'));
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
  });

  it("leaves no listener on the caller's signal once the wait is over", async () => {
    const { signal, listening } = countedSignal();
    await expect(boundWait(Promise.resolve('held'), undefined, signal, 'r')).resolves.toBe('held');
    expect(listening()).toBe(0);
    await expect(boundWait(Promise.reject(new Error('failed')), undefined, signal, 'r')).rejects.toThrow();
    expect(listening()).toBe(0);
  });
});

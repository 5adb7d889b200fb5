import { afterEach, describe, expect, it, vi } from 'vitest';
import { Backoff } from '../../lib/shared/backoff.js';

describe('Backoff', () => {
  afterEach(() => vi.useRealTimers());

  it('doubles the pause with each failure in a row, up to its bound, and starts again after a success', () => {
    const backoff = new Backoff(1000, 30_000);
    expect([1, 2, 3, 4, 5, 6, 7].map(() => backoff.next())).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(backoff.count).toBe(7);
    backoff.reset();
    expect(backoff.next()).toBe(1000);
  });

  it('forgets the failures before a quiet spell of forgetAfterMs', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const backoff = new Backoff(1000, 30_000, 60_000);
    expect([backoff.next(), backoff.next()]).toEqual([1000, 2000]);
    vi.advanceTimersByTime(59_999);
    expect(backoff.next()).toBe(4000); // within the spell: counted on
    vi.advanceTimersByTime(60_000);
    expect(backoff.next()).toBe(1000);
  });
});

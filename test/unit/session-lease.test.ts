import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionLease } from '../../lib/zookeeper/session-lease.js';

describe('a session lease (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => vi.useRealTimers());

  function lease(answer: 'answer' | 'silence') {
    const expired: number[] = [];
    let probes = 0;
    const l: SessionLease = new SessionLease(
      1000,
      () => {
        probes += 1;
        const sentAt = performance.now();
        if (answer === 'answer') l.answered(sentAt);
        return Promise.resolve();
      },
      (silentMs) => expired.push(silentMs),
    );
    return { l, expired, probes: () => probes };
  }

  it('runs from the send time of the latest answered request, not the time of its answer', () => {
    const { l } = lease('silence');
    const sentAt = performance.now();
    vi.advanceTimersByTime(300);
    l.answered(sentAt);
    expect(l.validUntil).toBe(sentAt + 1000);
    l.answered(sentAt - 50); // an older answer arriving late does not move it back
    expect(l.validUntil).toBe(sentAt + 1000);
  });

  it('in use and answered, it renews itself with a read at half its length and never runs out', async () => {
    const { l, expired, probes } = lease('answer');
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(expired).toEqual([]);
    expect(probes()).toBe(20);
    expect(l.isValid()).toBe(true);
  });

  it('in use and unanswered, it runs out at its end and tells its owner once', async () => {
    const { l, expired } = lease('silence');
    const start = performance.now();
    l.answered(start);
    l.retain();
    await vi.advanceTimersByTimeAsync(999);
    expect(expired).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(expired).toEqual([1000]);
    expect(l.isValid()).toBe(false);
  });

  it('unused, it sends nothing and ends nothing; used again after it ran out, it ends at once', async () => {
    const { l, expired, probes } = lease('silence');
    l.answered(performance.now());
    l.retain();
    l.release();
    await vi.advanceTimersByTimeAsync(5000);
    expect(probes()).toBe(0);
    expect(expired).toEqual([]);
    l.retain();
    await vi.advanceTimersByTimeAsync(1);
    expect(expired).toHaveLength(1);
  });
});

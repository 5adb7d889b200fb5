import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionLease } from '../../lib/zookeeper/session-lease.js';

describe('a session lease (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => vi.useRealTimers());

  /**
   * A 1,000 ms lease whose reads are answered, fail (the connection dropped), or go unanswered, and
   * whose session's pings are answered when `pingAnsweredAt` says; `timeoutMs` is the session's.
   */
  function lease(answer: 'answer' | 'late' | 'fail' | 'silence', pingAnsweredAt?: () => number | undefined, timeoutMs?: number) {
    const expired: number[] = [];
    let probes = 0;
    let reply = answer;
    const l: SessionLease = new SessionLease(
      1000,
      () => {
        probes += 1;
        const sentAt = performance.now();
        if (reply === 'answer') l.answered(sentAt);
        if (reply === 'late') return new Promise<void>((done) => setTimeout(() => (l.answered(sentAt), done()), 400));
        return reply === 'fail' ? Promise.reject(new Error('CONNECTIONLOSS')) : Promise.resolve();
      },
      (silentMs) => expired.push(silentMs),
      pingAnsweredAt,
      timeoutMs,
    );
    return { l, expired, probes: () => probes, reply: (next: typeof answer) => (reply = next) };
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

  it('in use and answered, it renews itself with a read after a quarter of its length and never runs out', async () => {
    const { l, expired, probes } = lease('answer', undefined, 4000);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(expired).toEqual([]);
    expect(probes()).toBe(40);
    expect(l.isValid()).toBe(true);
  });

  it('a renewal answered late (after the next was due) times the next one from its answer, not from the old end', async () => {
    // Each read is answered 400 ms after it is sent, later than a quarter of the 1,000 ms lease:
    // the next read goes when the answer comes. Waiting instead for the end the lease had when the
    // read was sent, the second read would go 750 ms after the first and its answer come too late.
    const { l, expired, probes } = lease('late', undefined, 4000);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(expired).toEqual([]);
    expect(probes()).toBe(25);
    expect(l.isValid()).toBe(true);
  });

  it('a lease longer than two thirds of the session timeout (the pings keep it) renews after half its length', async () => {
    const { l, probes } = lease('answer', undefined, 1200);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probes()).toBe(20);
  });

  it('a renewal that failed with the connection is sent again once connected, and keeps the lease', async () => {
    // The control: the same failure with nobody calling connected() runs out at the lease's end,
    // however soon the connection came back (an idle holder sends nothing else).
    for (const reconnect of [true, false]) {
      const { l, expired, probes, reply } = lease('fail', undefined, 4000);
      const start = performance.now();
      l.answered(start);
      l.retain();
      await vi.advanceTimersByTimeAsync(260); // the renewal at 250 ms fails: the connection dropped
      expect(probes()).toBe(1);
      reply('answer');
      await vi.advanceTimersByTimeAsync(300); // the connection is back 560 ms in
      if (reconnect) l.connected();
      expect(probes()).toBe(reconnect ? 2 : 1); // sent at once on reconnecting
      await vi.advanceTimersByTimeAsync(1000);
      expect(expired).toEqual(reconnect ? [] : [1000]);
      l.end();
    }
  });

  it('connected again with the lease fresh and no renewal failed, it sends nothing', async () => {
    const { l, probes } = lease('answer', undefined, 4000);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(100);
    l.connected();
    expect(probes()).toBe(0);
    l.end();
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

  /** A lease whose reads go unanswered, with pings answered every `everyMs` (sent `rttMs` before the answer is seen). */
  function pinged(everyMs: number, rttMs = 5) {
    const start = performance.now();
    return lease(
      'silence',
      () => {
        // The latest ping answered by now: sent at a multiple of everyMs, answered rttMs later.
        const k = Math.floor((performance.now() - start - rttMs) / everyMs);
        return k >= 1 ? start + k * everyMs : undefined;
      },
      3 * everyMs, // the C client pings after a third of the session timeout with nothing sent
    );
  }

  it("pings answered more often than half the lease keep it by themselves: no reads, and it never runs out", async () => {
    const { l, expired, probes } = pinged(400);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(expired).toEqual([]);
    expect(probes()).toBe(0);
    expect(l.isValid()).toBe(true);
  });

  it('pings answered less often than half the lease leave the reads to renew it; they still count', async () => {
    const { l, expired, probes } = pinged(700);
    l.answered(performance.now());
    l.retain();
    await vi.advanceTimersByTimeAsync(10_000);
    // The reads go unanswered here: the pings alone (every 700 ms, lease 1,000 ms) keep it running.
    expect(expired).toEqual([]);
    expect(probes()).toBeGreaterThan(0);
  });

  it('a ping answer counts from its send time, and validUntil looks at it once the answers ran out', async () => {
    const { l } = pinged(400);
    const start = performance.now();
    l.answered(start);
    await vi.advanceTimersByTimeAsync(1500); // unused: no timer; the answers alone ended at start + 1000
    // The latest ping answered by now was sent at start + 1200.
    expect(l.validUntil).toBe(start + 1200 + 1000);
    expect(l.checkNow()).toBe(true);
  });

  it('after the session ended, pings count for nothing', async () => {
    const { l } = pinged(400);
    l.answered(performance.now());
    l.end();
    await vi.advanceTimersByTimeAsync(1500);
    expect(l.validUntil).toBe(Number.NEGATIVE_INFINITY);
    expect(l.checkNow()).toBe(false);
  });
});

import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, LeadershipLostError, type LockEvent, type LockSessionInfo } from '../../lib/index.js';
import { LockMetrics } from '../../lib/metrics/index.js';

const at = { timestamp: 0, owner: undefined, permits: undefined };
const acquired = (resource: string, waitMs: number, extra: Partial<LockEvent> = {}): LockEvent =>
  ({ type: 'acquired', resource, mode: 'exclusive', waitMs, reentrant: false, fencingToken: '1', ...at, ...extra }) as LockEvent;
const released = (resource: string, holdMs: number, extra: Partial<LockEvent> = {}): LockEvent =>
  ({ type: 'released', resource, mode: 'exclusive', holdMs, reentrant: false, fencingToken: '1', ...at, ...extra }) as LockEvent;

function fakeService(info: Partial<LockSessionInfo> = {}) {
  const events$ = new Subject<LockEvent>();
  const session: LockSessionInfo = { connectionString: 'zk:2181', state: 'connected', sessionId: 'a1', sessionTimeoutMs: 4000, server: '127.0.0.1:2181', members: ['zk:2181'], addon: 'nestjs-zk-lock', tls: false, heldLocks: 0, elections: [], ...info };
  return { events$, sessionInfo: () => session, session };
}

describe('LockMetrics', () => {
  it('counts locks taken from ZooKeeper and reentrant joins apart, and histograms only the former', () => {
    const metrics = new LockMetrics({ waitBuckets: [0.01, 0.1, 1], holdBuckets: [1, 10] });
    metrics.record(acquired('a', 5));
    metrics.record(acquired('a', 50));
    metrics.record(acquired('a', 0, { reentrant: true }));
    metrics.record(acquired('a', 5000));
    metrics.record(released('a', 0.5, { reentrant: true }));
    metrics.record(released('a', 2500));
    const snapshot = metrics.snapshot();
    expect(snapshot).toMatchObject({ acquired: 3, reentrantAcquired: 1, released: 1 });
    expect(snapshot.waitSeconds.buckets).toEqual([
      { le: 0.01, count: 1 },
      { le: 0.1, count: 2 },
      { le: 1, count: 2 },
      { le: Infinity, count: 3 },
    ]);
    expect(snapshot.waitSeconds.count).toBe(3);
    expect(snapshot.waitSeconds.sum).toBeCloseTo(5.055);
    expect(snapshot.holdSeconds).toEqual({ buckets: [{ le: 1, count: 0 }, { le: 10, count: 1 }, { le: Infinity, count: 1 }], count: 1, sum: 2.5 });
  });

  it('an observation on a bucket bound falls in that bucket (le is "less than or equal")', () => {
    const metrics = new LockMetrics({ waitBuckets: [0.1] });
    metrics.record(acquired('a', 100));
    expect(metrics.snapshot().waitSeconds.buckets[0]).toEqual({ le: 0.1, count: 1 });
  });

  it('counts timeouts, aborts, failures by error name, lost locks and lost sessions', () => {
    const metrics = new LockMetrics();
    const base = { resource: 'r', mode: 'read', ...at } as const;
    metrics.record({ type: 'requested', ...base, tryOnly: false });
    metrics.record({ type: 'timed-out', ...base, waitMs: 10, tryOnly: false });
    metrics.record({ type: 'timed-out', ...base, waitMs: 0, tryOnly: true });
    metrics.record({ type: 'aborted', ...base, waitMs: 3 });
    metrics.record({ type: 'failed', ...base, waitMs: 1, errorName: 'IncompatibleLockError', error: new Error('x') });
    metrics.record({ type: 'failed', ...base, waitMs: 1, errorName: 'IncompatibleLockError', error: new Error('x') });
    metrics.record({ type: 'failed', ...base, waitMs: 1, errorName: 'LockServiceClosedError', error: new Error('x') });
    metrics.record({ type: 'connection', state: 'suspended', sessionId: 'a1', timestamp: 0 });
    metrics.record({ type: 'connection', state: 'lost', sessionId: 'a1', timestamp: 0 });
    expect(metrics.snapshot()).toMatchObject({
      timeouts: 2,
      aborted: 1,
      failures: { IncompatibleLockError: 2, LockServiceClosedError: 1 },
      sessionsLost: 1,
      sessionState: 'connecting',
      held: undefined,
    });
    metrics.record({ type: 'connection', state: 'reconnected', sessionId: 'a1', timestamp: 0 });
    expect(metrics.snapshot().sessionState).toBe('connected');
  });

  it('writes the Prometheus text format, per mode, with held locks and the session state read from the service', () => {
    const service = fakeService({ heldLocks: 2, state: 'suspended' });
    const metrics = new LockMetrics({ prefix: 'app_', waitBuckets: [0.5], holdBuckets: [1] });
    const subscription = metrics.attach(service);
    service.events$.next(acquired('a', 250, { mode: 'write' }));
    service.events$.next(released('a', 2000, { mode: 'write' }));
    service.events$.next({ type: 'failed', resource: 'x', mode: 'semaphore', permits: 2, owner: undefined, timestamp: 0, waitMs: 1, errorName: 'Odd"Name', error: null });
    subscription.unsubscribe();
    service.events$.next(acquired('a', 250)); // not counted: detached
    const text = metrics.prometheus();
    expect(text.endsWith('\n')).toBe(true);
    const samples = text.split('\n').filter((line) => line && !line.startsWith('#'));
    expect(samples).toEqual([
      'app_lock_acquired_total{mode="write"} 1',
      'app_lock_released_total{mode="write"} 1',
      'app_lock_failures_total{mode="semaphore",error="Odd\\"Name"} 1',
      'app_zk_session_lost_total 0',
      'app_lock_acquire_wait_seconds_bucket{mode="write",le="0.5"} 1',
      'app_lock_acquire_wait_seconds_bucket{mode="write",le="+Inf"} 1',
      'app_lock_acquire_wait_seconds_sum{mode="write"} 0.25',
      'app_lock_acquire_wait_seconds_count{mode="write"} 1',
      'app_lock_hold_seconds_bucket{mode="write",le="1"} 0',
      'app_lock_hold_seconds_bucket{mode="write",le="+Inf"} 1',
      'app_lock_hold_seconds_sum{mode="write"} 2',
      'app_lock_hold_seconds_count{mode="write"} 1',
      'app_lock_held 2',
      'app_zk_session_state{state="connecting"} 0',
      'app_zk_session_state{state="connected"} 0',
      'app_zk_session_state{state="suspended"} 1',
      'app_zk_session_state{state="closed"} 0',
    ]);
    expect(text).toContain('# TYPE app_lock_hold_seconds histogram\n');
    expect(text).toContain('# TYPE app_lock_timeouts_total counter\n');
    expect(text).toContain('# TYPE app_zk_session_state gauge\n');
  });

  it('counts terms of leadership by group (and how they ended), and writes lock_leader 1 or 0 for each election of the service', () => {
    const service = fakeService({
      elections: [
        { group: 'relay', id: 'a', state: 'leading', fencingToken: '12' },
        { group: 'jobs "nightly"', id: 'a', state: 'following' },
        { group: 'broken', id: 'a', state: 'failed' },
      ],
    });
    const metrics = new LockMetrics({ prefix: 'app_' });
    metrics.attach(service);
    const elected = (group: string, fencingToken: string): LockEvent => ({ type: 'elected', group, participantId: 'a', fencingToken, waitMs: 3, timestamp: 0 });
    const revoked = (group: string, fencingToken: string, end: 'lost' | 'resigned' | 'left'): LockEvent => {
      const error = new LeadershipLostError(group, fencingToken, 'given up', end === 'lost' ? 'session-expired' : 'given-up', end);
      return { type: 'term-ended', group, participantId: 'a', fencingToken, leadMs: 40, end, reason: error.reason, error, timestamp: 0 };
    };
    service.events$.next(elected('relay', '5'));
    service.events$.next(revoked('relay', '5', 'resigned'));
    service.events$.next(elected('relay', '9'));
    service.events$.next(revoked('relay', '9', 'lost'));
    service.events$.next(elected('relay', '12'));
    service.events$.next(elected('jobs "nightly"', '3'));
    service.events$.next(revoked('jobs "nightly"', '3', 'left'));
    service.events$.next({ type: 'skipped', resource: 'relay', mode: 'election', permits: undefined, owner: undefined, timestamp: 0, reason: 'not-leader' });
    const text = metrics.prometheus();
    const samples = text.split('\n').filter((line) => /^app_lock_(leader|leadership|skipped)/.test(line));
    expect(samples).toEqual([
      'app_lock_skipped_total{mode="election",reason="not-leader"} 1',
      'app_lock_leadership_elected_total{group="relay"} 3',
      'app_lock_leadership_elected_total{group="jobs \\"nightly\\""} 1',
      'app_lock_leadership_terms_ended_total{group="relay",end="resigned"} 1',
      'app_lock_leadership_terms_ended_total{group="relay",end="lost"} 1',
      'app_lock_leadership_terms_ended_total{group="jobs \\"nightly\\"",end="left"} 1',
      'app_lock_leader{group="relay"} 1',
      'app_lock_leader{group="jobs \\"nightly\\""} 0',
      'app_lock_leader{group="broken"} 0',
    ]);
    expect(text).toContain('# TYPE app_lock_leader gauge\n');
    expect(text).toContain('# TYPE app_lock_leadership_elected_total counter\n');
    expect(text).toContain('# TYPE app_lock_leadership_terms_ended_total counter\n');
    // Leadership is not a lock: no acquire, release or loss is counted for it.
    expect(metrics.snapshot()).toMatchObject({ acquired: 0, released: 0, lost: 0, skipped: { busy: 0, 'ran-this-tick': 0, 'not-leader': 1 } });
    // No election, no leader gauge.
    const none = new LockMetrics();
    none.attach(fakeService());
    expect(none.prometheus()).not.toMatch(/lock_leader[ {]/);
  });

  it('refuses buckets that do not increase, and a prefix that is not part of a metric name', () => {
    expect(() => new LockMetrics({ waitBuckets: [1, 0.5] })).toThrow(InvalidOptionsError);
    expect(() => new LockMetrics({ holdBuckets: [] })).toThrow(InvalidOptionsError);
    expect(() => new LockMetrics({ holdBuckets: [-1] })).toThrow(InvalidOptionsError);
    expect(() => new LockMetrics({ prefix: 'my-app_' })).toThrow(InvalidOptionsError);
  });
});

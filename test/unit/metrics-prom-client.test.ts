/**
 * The prom-client example of docs/operations.md (Metrics, With prom-client), compiled and run here so that it cannot rot.
 * prom-client is not a dependency: the example is typed against the few methods it calls, which
 * prom-client's Counter, Histogram and Gauge have.
 */
import { type Observable, Subject, type Subscription } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ConnectionState, LockEvent } from '../../lib/index.js';

// --- the example, as in the docs ---------------------------------------------------------------
type Labels = Record<string, string>;
interface CounterLike {
  inc(labels: Labels): void;
}
interface HistogramLike {
  observe(labels: Labels, seconds: number): void;
}
interface GaugeLike {
  set(labels: Labels, value: number): void;
}

export interface LockPromMetrics {
  wait: HistogramLike; // lock_acquire_wait_seconds, labelNames: ['mode']
  hold: HistogramLike; // lock_hold_seconds, labelNames: ['mode']
  timeouts: CounterLike; // lock_timeouts_total, labelNames: ['mode']
  lost: CounterLike; // lock_lost_total, labelNames: ['mode']
  sessionState: GaugeLike; // zk_session_state, labelNames: ['state']
}

const STATES: readonly ConnectionState[] = ['connected', 'suspended', 'reconnected', 'lost', 'closed'];

export function recordLockMetrics(events$: Observable<LockEvent>, metrics: LockPromMetrics): Subscription {
  return events$.subscribe((event) => {
    switch (event.type) {
      case 'acquired':
        // A reentrant join waited for nothing and holds no node of its own: leave it out.
        if (!event.reentrant) metrics.wait.observe({ mode: event.mode }, event.waitMs / 1000);
        break;
      case 'released':
        if (!event.reentrant) metrics.hold.observe({ mode: event.mode }, event.holdMs / 1000);
        break;
      case 'timed-out':
        metrics.timeouts.inc({ mode: event.mode });
        break;
      case 'lost':
        metrics.lost.inc({ mode: event.mode });
        break;
      case 'connection':
        for (const state of STATES) metrics.sessionState.set({ state }, state === event.state ? 1 : 0);
        break;
    }
  });
}
// --- end of the example ------------------------------------------------------------------------

describe('the prom-client example of the docs', () => {
  it('feeds histograms, counters and the session gauge from the events', () => {
    const calls: string[] = [];
    const record = (name: string) => (labels: Labels, value?: number) => calls.push(`${name}${JSON.stringify(labels)}${value ?? ''}`);
    const events$ = new Subject<LockEvent>();
    const subscription = recordLockMetrics(events$, {
      wait: { observe: record('wait') },
      hold: { observe: record('hold') },
      timeouts: { inc: record('timeouts') },
      lost: { inc: record('lost') },
      sessionState: { set: record('state') },
    });
    const base = { resource: 'r', mode: 'write', owner: undefined, permits: undefined, timestamp: 0 } as const;
    events$.next({ type: 'connection', state: 'connected', sessionId: 'a', timestamp: 0 });
    events$.next({ type: 'acquired', ...base, waitMs: 1500, reentrant: false, fencingToken: '1' });
    events$.next({ type: 'acquired', ...base, waitMs: 0, reentrant: true, fencingToken: '1' });
    events$.next({ type: 'released', ...base, holdMs: 0, reentrant: true, fencingToken: '1' });
    events$.next({ type: 'released', ...base, holdMs: 250, reentrant: false, fencingToken: '1' });
    events$.next({ type: 'timed-out', ...base, waitMs: 10, tryOnly: false });
    subscription.unsubscribe();
    events$.next({ type: 'timed-out', ...base, waitMs: 10, tryOnly: false });
    expect(calls).toEqual([
      'state{"state":"connected"}1',
      'state{"state":"suspended"}0',
      'state{"state":"reconnected"}0',
      'state{"state":"lost"}0',
      'state{"state":"closed"}0',
      'wait{"mode":"write"}1.5',
      'hold{"mode":"write"}0.25',
      'timeouts{"mode":"write"}',
    ]);
  });
});

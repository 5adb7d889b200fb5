import type { Observable, Subscription } from 'rxjs';
import { InvalidOptionsError } from '../errors.js';
import type { LockElectedEvent, LockEvent, LockTermEndedEvent, LockSessionInfo, LockSkipReason } from '../events/lock-event-types.js';
import type { ConnectionState } from '../zookeeper/zk-connection-like.js';
import { Counter, escapeLabel, header, Histogram, type HistogramSnapshot } from './metric-series.js';

/** Histogram bucket upper bounds, in seconds: from a millisecond to a minute. */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The Content-Type of `LockMetrics.prometheus()`: Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** What LockMetrics reads from a LockService (a structural type, so a fake fits in tests). */
export interface LockMetricsSource {
  readonly events$: Observable<LockEvent>;
  sessionInfo(): LockSessionInfo;
}

/** Options of LockMetrics: histogram buckets and a name prefix. */
export interface LockMetricsOptions {
  /**
   * Upper bounds of `lock_acquire_wait_seconds`' buckets, in seconds, increasing.
   * @default DEFAULT_SECONDS_BUCKETS (0.001 s to 60 s)
   */
  waitBuckets?: readonly number[];
  /**
   * Upper bounds of `lock_hold_seconds`' buckets, in seconds, increasing.
   * @default DEFAULT_SECONDS_BUCKETS (0.001 s to 60 s)
   */
  holdBuckets?: readonly number[];
  /**
   * Put before every metric name (`'myapp_'` gives `myapp_lock_hold_seconds`).
   * @default ''
   */
  prefix?: string;
}

/** Totals over every mode (the Prometheus text has them per mode). */
export interface LockMetricsSnapshot {
  /** Locks taken from ZooKeeper (reentrant joins not counted). */
  readonly acquired: number;
  /** Acquires a lock context answered with a lock it already held or was taking. */
  readonly reentrantAcquired: number;
  /** Releases of the handles that took a lock from ZooKeeper. */
  readonly released: number;
  /** waitTimeoutMs passed, or tryAcquire found the lock busy. */
  readonly timeouts: number;
  readonly aborted: number;
  /** Acquires that failed with another error, by error name. */
  readonly failures: Readonly<Record<string, number>>;
  readonly lost: number;
  /** Runs skipped (busy, their tick already ran, or not the leader), by reason. */
  readonly skipped: Readonly<Record<LockSkipReason, number>>;
  /** ZooKeeper sessions lost. */
  readonly sessionsLost: number;
  /** Locks the attached LockService holds now; undefined when none is attached. */
  readonly held: number | undefined;
  /** The attached service's session state, or the last one seen in the events. */
  readonly sessionState: SessionGaugeState | undefined;
  /** Wait of the acquires that took a lock from ZooKeeper. */
  readonly waitSeconds: HistogramSnapshot;
  /** Hold of the handles that took a lock from ZooKeeper, grant to release. */
  readonly holdSeconds: HistogramSnapshot;
}

/** The states of the `zk_session_state` gauge (`reconnected` counts as connected, `lost` as connecting). */
export type SessionGaugeState = 'connecting' | 'connected' | 'suspended' | 'closed';
const SESSION_STATES: readonly SessionGaugeState[] = ['connecting', 'connected', 'suspended', 'closed'];

/**
 * Counters and histograms from a LockService's events, with no metrics library: read `snapshot()`,
 * or serve `prometheus()` (text exposition format) at `/metrics`.
 */
export class LockMetrics {
  private readonly prefix: string;
  private readonly acquired = new Counter('lock_acquired_total', 'Locks taken from ZooKeeper (reentrant joins not counted).');
  private readonly reentrant = new Counter('lock_reentrant_acquired_total', 'Acquires answered by a lock the lock context already held.');
  private readonly released = new Counter('lock_released_total', 'Releases of locks taken from ZooKeeper.');
  private readonly timeouts = new Counter('lock_timeouts_total', 'Acquires that timed out, and tryAcquire calls that found the lock busy.');
  private readonly aborted = new Counter('lock_aborted_total', "Acquires stopped by the caller's signal.");
  private readonly failures = new Counter('lock_failures_total', 'Acquires that failed with an error, by error name.');
  private readonly lost = new Counter('lock_lost_total', 'Held locks lost (session expired or lost, or taken away at shutdown).');
  private readonly skipped = new Counter('lock_skipped_total', 'Runs skipped: their lock was busy, their scheduled tick already ran, or this instance does not lead (by reason).');
  private readonly skippedByReason: Record<LockSkipReason, number> = { busy: 0, 'ran-this-tick': 0, 'not-leader': 0 };
  private readonly sessionsLost = new Counter('zk_session_lost_total', 'ZooKeeper sessions lost.', false);
  private readonly elected = new Counter('lock_leadership_elected_total', 'Terms of leadership this instance began (by group).');
  private readonly termsEnded = new Counter('lock_leadership_terms_ended_total', 'Terms of leadership that ended: lost, resigned or left (by group and end).');
  private readonly failuresByName = new Map<string, number>();
  private readonly wait: Histogram;
  private readonly hold: Histogram;
  private lastState: SessionGaugeState | undefined;
  private source: LockMetricsSource | undefined;

  constructor(options: LockMetricsOptions = {}) {
    if (options.prefix !== undefined && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$|^$/.test(options.prefix)) {
      throw new InvalidOptionsError('prefix', `must be a Prometheus metric name prefix ([a-zA-Z_:][a-zA-Z0-9_:]*), got ${JSON.stringify(options.prefix)}`);
    }
    this.prefix = options.prefix ?? '';
    this.wait = new Histogram('lock_acquire_wait_seconds', 'Wait of acquires that took a lock from ZooKeeper, in seconds.', buckets(options.waitBuckets, 'waitBuckets'));
    this.hold = new Histogram('lock_hold_seconds', 'Hold time of locks taken from ZooKeeper, grant to release, in seconds.', buckets(options.holdBuckets, 'holdBuckets'));
  }

  /**
   * Records every event of `locks` from now on, and reads its held locks and session state at each
   * snapshot. Unsubscribe the returned subscription to stop.
   */
  attach(locks: LockMetricsSource): Subscription {
    this.source = locks;
    return locks.events$.subscribe((event) => this.record(event));
  }

  /** Counts one event (for events from a stream you manage yourself). */
  record(event: LockEvent): void {
    if (event.type === 'connection') {
      if (event.state === 'lost') this.sessionsLost.inc('');
      this.lastState = event.state === 'reconnected' ? 'connected' : event.state === 'lost' ? 'connecting' : event.state;
      return;
    }
    if (event.type === 'elected' || event.type === 'term-ended') return this.recordLeadership(event);
    const mode = `mode="${event.mode}"`;
    switch (event.type) {
      case 'acquired':
        if (event.reentrant) {
          this.reentrant.inc(mode);
        } else {
          this.acquired.inc(mode);
          this.wait.observe(mode, event.waitMs / 1000);
        }
        return;
      case 'released':
        if (!event.reentrant) {
          this.released.inc(mode);
          this.hold.observe(mode, event.holdMs / 1000);
        }
        return;
      case 'timed-out':
        return this.timeouts.inc(mode);
      case 'aborted':
        return this.aborted.inc(mode);
      case 'failed':
        this.failuresByName.set(event.errorName, (this.failuresByName.get(event.errorName) ?? 0) + 1);
        return this.failures.inc(`${mode},error="${escapeLabel(event.errorName)}"`);
      case 'lost':
        return this.lost.inc(mode);
      case 'skipped':
        this.skippedByReason[event.reason] += 1;
        return this.skipped.inc(`${mode},reason="${event.reason}"`);
      case 'requested':
      case 'release-requested':
        return;
    }
  }

  private recordLeadership(event: LockElectedEvent | LockTermEndedEvent): void {
    const group = `group="${escapeLabel(event.group)}"`;
    if (event.type === 'elected') this.elected.inc(group);
    else this.termsEnded.inc(`${group},end="${event.end}"`);
  }

  snapshot(): LockMetricsSnapshot {
    const live = this.source?.sessionInfo();
    return {
      acquired: this.acquired.total(),
      reentrantAcquired: this.reentrant.total(),
      released: this.released.total(),
      timeouts: this.timeouts.total(),
      aborted: this.aborted.total(),
      failures: Object.fromEntries(this.failuresByName),
      lost: this.lost.total(),
      skipped: { ...this.skippedByReason },
      sessionsLost: this.sessionsLost.total(),
      held: live?.heldLocks,
      sessionState: live ? gaugeState(live.state) : this.lastState,
      waitSeconds: this.wait.snapshot(),
      holdSeconds: this.hold.snapshot(),
    };
  }

  /** Every metric in Prometheus text exposition format (serve it with PROMETHEUS_CONTENT_TYPE). */
  prometheus(): string {
    const live = this.source?.sessionInfo();
    const lines: string[] = [];
    for (const counter of [this.acquired, this.reentrant, this.released, this.timeouts, this.aborted, this.failures, this.lost, this.skipped, this.sessionsLost, this.elected, this.termsEnded]) {
      counter.write(lines, this.prefix);
    }
    this.wait.write(lines, this.prefix);
    this.hold.write(lines, this.prefix);
    if (live) {
      header(lines, `${this.prefix}lock_held`, 'Locks the LockService holds through ZooKeeper now.', 'gauge');
      lines.push(`${this.prefix}lock_held ${live.heldLocks}`);
      if (live.elections.length > 0) {
        header(lines, `${this.prefix}lock_leader`, 'Whether this instance leads the group now: 1 or 0.', 'gauge');
        for (const election of live.elections) {
          lines.push(`${this.prefix}lock_leader{group="${escapeLabel(election.group)}"} ${election.state === 'leading' ? 1 : 0}`);
        }
      }
    }
    const state = live ? gaugeState(live.state) : this.lastState;
    if (state) {
      header(lines, `${this.prefix}zk_session_state`, 'The ZooKeeper session state: 1 for the current one.', 'gauge');
      for (const each of SESSION_STATES) lines.push(`${this.prefix}zk_session_state{state="${each}"} ${each === state ? 1 : 0}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function gaugeState(state: ConnectionState | 'connecting'): SessionGaugeState {
  if (state === 'reconnected') return 'connected';
  if (state === 'lost') return 'connecting';
  return state;
}

function buckets(value: readonly number[] | undefined, option: string): readonly number[] {
  if (value === undefined) return DEFAULT_SECONDS_BUCKETS;
  const valid = Array.isArray(value) && value.length > 0 && value.every((b, i) => Number.isFinite(b) && b > 0 && (i === 0 || b > value[i - 1]!));
  if (!valid) throw new InvalidOptionsError(option, 'must be a non-empty list of increasing positive numbers of seconds');
  return [...value];
}

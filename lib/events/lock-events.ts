import { Observable, Subject } from 'rxjs';
import type { HolderHandle, ReleaseHooks } from '../context/holder-handle.js';
import { type LeadershipLostError, LockAbortedError, LockLostError, LockTimeoutError } from '../errors.js';
import type { LockRequest } from '../context/lock-request.js';
import type { ConnectionState } from '../zookeeper/zk-connection-like.js';
import type { LockKindOptions } from '../recipes/lock-kind.js';
import type { LockEvent, LockEventTarget, LockSkippedEvent, LockSkipReason } from './lock-event-types.js';
import { type AcquireSpan, eventModeOf, type HoldSpan, type LockTracing } from './lock-tracing.js';

/**
 * The event stream of one LockService, and its spans when OpenTelemetry is there. Nothing is built,
 * timed or wrapped unless someone subscribes or a tracer records: the lock path checks first.
 */
export class LockEvents {
  private readonly subject = new Subject<LockEvent>();
  private subscribers = 0;
  /**
   * Someone subscribes to events$. A field, set when subscribers come and go, so that an acquire
   * reads it and calls nothing here while no one listens.
   */
  observed = false;
  /** Someone subscribes, or OpenTelemetry may record spans: emit events when this is true (a field, as `observed`). */
  watched: boolean;

  constructor(
    /** Spans, when `@opentelemetry/api` is installed and tracing is not off. */
    readonly tracing?: LockTracing,
  ) {
    this.watched = tracing !== undefined;
  }

  /** Hot and synchronous: events are delivered while the lock call runs; none are replayed. */
  readonly events$: Observable<LockEvent> = new Observable<LockEvent>((subscriber) => {
    this.counted(1);
    const subscription = this.subject.subscribe(subscriber);
    return () => {
      this.counted(-1);
      subscription.unsubscribe();
    };
  });

  private counted(change: 1 | -1): void {
    this.subscribers += change;
    this.observed = this.subscribers > 0;
    this.watched = this.observed || this.tracing !== undefined;
  }

  /** Delivers `event` to the subscribers, and to the active span when it is a span event. */
  emit(event: LockEvent): void {
    this.subject.next(event);
    this.tracing?.eventOnActiveSpan(event);
  }

  connection(state: ConnectionState, sessionId: string): void {
    if (this.observed) this.emit({ type: 'connection', state, sessionId, timestamp: Date.now() });
  }

  /**
   * A run skipped (see LockSkippedEvent), emitted in the caller's async context (a span event on the
   * job's or request's span); returned also when no one listens, for the caller's log line.
   */
  skipped(resource: string, kind: LockKindOptions, owner: string | undefined, reason: LockSkipReason, election = false): LockSkippedEvent {
    const mode = election ? 'election' : eventModeOf(kind);
    const event: LockSkippedEvent = { type: 'skipped', resource, mode, permits: kind.permits, owner, reason, timestamp: Date.now() };
    if (this.watched) this.emit(event);
    return event;
  }

  /** This instance leads `group` now (see LockElectedEvent). */
  elected(group: string, participantId: string, fencingToken: string, waitMs: number): void {
    if (this.watched) this.emit({ type: 'elected', group, participantId, fencingToken, waitMs, timestamp: Date.now() });
  }

  /** This instance's term of leadership of `group` ended (see LockTermEndedEvent). */
  termEnded(group: string, participantId: string, leadMs: number, error: LeadershipLostError): void {
    if (!this.watched) return;
    this.emit({ type: 'term-ended', group, participantId, fencingToken: error.fencingToken, leadMs, end: error.end, reason: error.reason, error, timestamp: Date.now() });
  }

  /**
   * Runs one acquire (`acquisition.holder`) with events and spans around it: requested, then its
   * outcome; the handle returned reports its release (its last release hook, after `hooks`), and its
   * lock's loss. The caller calls it only when someone listens (`observed`) or `span` records (it
   * opened it synchronously, in its async context: the spans' parent).
   */
  async observe(
    target: Omit<LockEventTarget, 'timestamp'>,
    span: AcquireSpan | undefined,
    request: LockRequest,
    tryOnly: boolean,
    acquisition: HolderSource,
    /** The caller's own release hooks (a minimum hold). */
    hooks: ReleaseHooks | undefined,
  ): Promise<HolderHandle | null> {
    if (this.observed) this.emit({ type: 'requested', ...target, tryOnly, timestamp: Date.now() });
    const started = performance.now();
    // The handle's last release hook, given at its making; what it reports is known at the grant.
    let held: HeldCourse | undefined;
    const onReleased = (error?: unknown): void => {
      if (held) this.released(held, error);
    };
    let handle: HolderHandle | null;
    try {
      handle = await acquisition.holder(request, tryOnly, { minimumHold: hooks?.minimumHold, onReleased });
    } catch (error) {
      const waitMs = performance.now() - started;
      span?.failed(waitMs, error);
      if (this.observed) this.emit(this.failure(target, error, waitMs));
      throw error;
    }
    const grantedAt = performance.now();
    if (!handle) {
      span?.busy(grantedAt - started);
      if (this.observed) this.emit({ type: 'timed-out', ...target, waitMs: grantedAt - started, tryOnly, timestamp: Date.now() });
      return null;
    }
    // Answered by the lock context from a lock it held or was taking: ZooKeeper was not asked.
    const { reentrant } = handle;
    const fencingToken = handle.fencingToken;
    const hold = span?.granted(grantedAt - started, fencingToken, reentrant);
    if (this.observed) {
      this.emit({ type: 'acquired', ...target, waitMs: grantedAt - started, reentrant, fencingToken, timestamp: Date.now() });
    }
    held = { target, grantedAt, fencingToken, hold, reentrant };
    // The loss and a release request are events once per lock node: the handle that took it reports them.
    if (hold || !reentrant) this.reportLoss(handle.signal, held, !reentrant);
    if (request.onReleaseRequest && (hold || !reentrant)) this.reportRequest(handle.releaseRequested, held, !reentrant);
    return handle;
  }

  /** A handle's release: its span ends, and a `released` event when it went well. */
  private released({ target, grantedAt, fencingToken, hold, reentrant }: HeldCourse, error: unknown): void {
    hold?.released(error);
    if (error !== undefined || !this.observed) return;
    this.emit({ type: 'released', ...target, holdMs: performance.now() - grantedAt, reentrant, fencingToken, timestamp: Date.now() });
  }

  private failure(target: Omit<LockEventTarget, 'timestamp'>, error: unknown, waitMs: number): LockEvent {
    const timestamp = Date.now();
    if (error instanceof LockTimeoutError) return { type: 'timed-out', ...target, waitMs, tryOnly: false, timestamp };
    if (error instanceof LockAbortedError) return { type: 'aborted', ...target, waitMs, timestamp };
    const errorName = error instanceof Error ? error.name : typeof error;
    return { type: 'failed', ...target, waitMs, errorName, error, timestamp };
  }

  /** Listens for a release request to a revocable lock taken from ZooKeeper (never removed, as reportLoss). */
  private reportRequest(signal: AbortSignal, held: HeldCourse, asEvent: boolean): void {
    const { target, grantedAt, fencingToken, hold } = held;
    const onRequest = (): void => {
      hold?.releaseRequested();
      if (!asEvent || !this.observed) return;
      this.emit({ type: 'release-requested', ...target, holdMs: performance.now() - grantedAt, fencingToken, timestamp: Date.now() });
    };
    signal.addEventListener('abort', onRequest, { once: true });
  }

  /**
   * Listens for the loss of a lock. Never removed: a released lock's signal never aborts, and the
   * listener goes away with the lock.
   */
  private reportLoss(signal: AbortSignal, held: HeldCourse, asEvent: boolean): void {
    const { target, grantedAt, fencingToken, hold } = held;
    const onAbort = (): void => {
      const error: unknown = signal.reason;
      hold?.aborted(error);
      if (!asEvent || !this.observed || !(error instanceof LockLostError)) return;
      const lost = { holdMs: performance.now() - grantedAt, fencingToken, errorName: error.name, reason: error.reason, error };
      this.emit({ type: 'lost', ...target, ...lost, timestamp: Date.now() });
    };
    signal.addEventListener('abort', onAbort, { once: true });
  }
}

/** What the listeners of a granted lock need. */
interface HeldCourse {
  readonly target: Omit<LockEventTarget, 'timestamp'>;
  readonly grantedAt: number;
  readonly fencingToken: string;
  readonly hold: HoldSpan | undefined;
  /** Answered by the lock context: ZooKeeper was not asked. */
  readonly reentrant: boolean;
}

/** Where `observe` gets its handle: the acquisition (LockAcquirer.holder), always a HolderHandle so that its release is reported. */
export interface HolderSource {
  holder(request: LockRequest, tryOnly: boolean, hooks: ReleaseHooks): Promise<HolderHandle | null>;
}

import { Observable, Subject } from 'rxjs';
import { ReentrantHandle } from '../context/lock-context.js';
import { LockAbortedError, type LockLossReason, LockLostError, LockTimeoutError } from '../errors.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import { ForwardingHandle } from '../recipes/forwarding-handle.js';
import type { LockKind, LockMode } from '../recipes/lock-kind.js';
import type { LockRequest } from '../context/lock-request.js';
import type { ConnectionState } from '../zookeeper/zk-lock-connection.js';

/** What every event about one lock carries. */
export interface LockEventTarget {
  /** The resource name as the caller gave it. */
  readonly resource: string;
  /** The kind of lock: its mode, or `'semaphore'` when `permits` is set. */
  readonly mode: LockMode | 'semaphore';
  /** A semaphore's permits. */
  readonly permits?: number;
  /** Who asked: the acquire's `owner` option, or the request / decorated method of the lock context. */
  readonly owner?: string;
  /** When it happened, in ms since the epoch (`Date.now()`). */
  readonly timestamp: number;
}

/** An acquire (or tryAcquire) was called. */
export interface LockRequestedEvent extends LockEventTarget {
  readonly type: 'requested';
  /** True for tryAcquire. */
  readonly tryOnly: boolean;
}

/** The lock was granted. */
export interface LockAcquiredEvent extends LockEventTarget {
  readonly type: 'acquired';
  /** How long the caller waited, in ms (fractional). */
  readonly waitMs: number;
  /**
   * True when the lock context already held (or was already taking) the lock and this acquire joined
   * it without a ZooKeeper node of its own. Count only `reentrant: false` as locks taken.
   */
  readonly reentrant: boolean;
  readonly fencingToken: string;
}

/** A handle was released (for a reentrant handle: its share; the node goes with the last one). */
export interface LockReleasedEvent extends LockEventTarget {
  readonly type: 'released';
  /** How long this handle held the lock, from the grant to the confirmed release, in ms (fractional). */
  readonly holdMs: number;
  readonly reentrant: boolean;
  readonly fencingToken: string;
}

/** waitTimeoutMs passed (LockTimeoutError), or tryAcquire found the lock busy (it returned null). */
export interface LockTimedOutEvent extends LockEventTarget {
  readonly type: 'timed-out';
  readonly waitMs: number;
  /** True when tryAcquire found the lock busy. */
  readonly tryOnly: boolean;
}

/** The caller's signal stopped the wait (LockAbortedError). */
export interface LockAbortedEvent extends LockEventTarget {
  readonly type: 'aborted';
  readonly waitMs: number;
}

/** The acquire failed with any other error (thrown to the caller as well). */
export interface LockFailedEvent extends LockEventTarget {
  readonly type: 'failed';
  readonly waitMs: number;
  /** The error's `name`, e.g. `'IncompatibleLockError'`, `'LockServiceClosedError'`. */
  readonly errorName: string;
  readonly error: unknown;
}

/**
 * A lock taken through ZooKeeper was lost (session expired or declared lost, or taken away at
 * shutdown): its signal aborted with `error`. Once per lock node, however many holders joined it.
 */
export interface LockLostEvent extends LockEventTarget {
  readonly type: 'lost';
  /** From the grant to the loss, in ms (fractional). */
  readonly holdMs: number;
  readonly fencingToken: string;
  readonly errorName: string;
  /** Why it was lost (see LockLossReason): `lease-expired` is the library's own safety stop. */
  readonly reason: LockLossReason;
  readonly error: LockLostError;
}

/**
 * Another service asked for a revocable lock (taken with `onReleaseRequest`) to be released: its
 * `releaseRequested` signal aborted. Once per lock node. With `'release'`, a `lost` event follows.
 */
export interface LockReleaseRequestedEvent extends LockEventTarget {
  readonly type: 'release-requested';
  /** From the grant to the request, in ms (fractional). */
  readonly holdMs: number;
  readonly fencingToken: string;
}

/** Why a run was skipped: its lock was busy, or its scheduled tick already ran on some instance. */
export type LockSkipReason = 'busy' | 'ran-this-tick';

/**
 * A run was skipped: a `@DistributedLock` method with `onBusy: 'skip'` found its lock busy, or a
 * scheduled method found its tick already run (see `oncePerTick`). The method was not called and
 * resolved undefined. Not an error.
 */
export interface LockSkippedEvent extends LockEventTarget {
  readonly type: 'skipped';
  readonly reason: LockSkipReason;
}

/** The ZooKeeper connection changed state (see ConnectionState). */
export interface LockConnectionEvent {
  readonly type: 'connection';
  readonly state: ConnectionState;
  /** The session's id, hex ('' when closed before any session). */
  readonly sessionId: string;
  /** In ms since the epoch. */
  readonly timestamp: number;
}

/** Everything `LockService.events$` emits; switch on `type`. */
export type LockEvent =
  | LockRequestedEvent
  | LockAcquiredEvent
  | LockReleasedEvent
  | LockTimedOutEvent
  | LockAbortedEvent
  | LockFailedEvent
  | LockLostEvent
  | LockReleaseRequestedEvent
  | LockSkippedEvent
  | LockConnectionEvent;

export type LockEventType = LockEvent['type'];

/** The ZooKeeper session as a health check reports it (no credentials). */
export interface LockSessionInfo {
  /** The connect string (the digest credential is a separate option and never shown). */
  readonly connectionString: string;
  /** `'connected'` also after a reconnect; `'connecting'` before the first session and after a loss. */
  readonly state: ConnectionState | 'connecting';
  /** The current session's id (hex), if one was ever opened. */
  readonly sessionId: string | undefined;
  /** The session timeout the server granted, in ms. */
  readonly sessionTimeoutMs: number | undefined;
  /** What talks to the server: `nestjs-zk-lock` (this package's native addon, on every real connection) or `in-memory` (the testing kit). */
  readonly addon: 'nestjs-zk-lock' | 'in-memory';
  /** Whether the connection to ZooKeeper uses TLS (the `tls` option). */
  readonly tls: boolean;
  /** Locks this LockService holds through ZooKeeper right now (reentrant joins not counted). */
  readonly heldLocks: number;
}

/**
 * The event stream of one LockService. Nothing is built, timed or wrapped unless someone
 * subscribes: the lock path checks `observed` first.
 */
export class LockEvents {
  private readonly subject = new Subject<LockEvent>();
  private subscribers = 0;

  /** Hot and synchronous: events are delivered while the lock call runs; none are replayed. */
  readonly events$: Observable<LockEvent> = new Observable<LockEvent>((subscriber) => {
    this.subscribers += 1;
    const subscription = this.subject.subscribe(subscriber);
    return () => {
      this.subscribers -= 1;
      subscription.unsubscribe();
    };
  });

  get observed(): boolean {
    return this.subscribers > 0;
  }

  emit(event: LockEvent): void {
    this.subject.next(event);
  }

  /** A run skipped (see LockSkippedEvent); the event, also when no one listens (for the caller's log line). */
  skipped(resource: string, kind: LockKind, owner: string | undefined, reason: LockSkipReason): LockSkippedEvent {
    const event: LockSkippedEvent = { type: 'skipped', resource, mode: eventModeOf(kind), permits: kind.permits, owner, reason, timestamp: Date.now() };
    if (this.observed) this.emit(event);
    return event;
  }

  connection(state: ConnectionState, sessionId: string): void {
    if (this.observed) this.emit({ type: 'connection', state, sessionId, timestamp: Date.now() });
  }

  /**
   * Runs one acquire with events around it: requested, then its outcome; the handle returned
   * reports its release, and the one that took the lock from ZooKeeper reports its loss.
   */
  async observe(
    request: LockRequest,
    tryOnly: boolean,
    owner: string | undefined,
    obtain: () => Promise<LockHandle | null>,
  ): Promise<LockHandle | null> {
    const { permits } = request.kind;
    const target: Omit<LockEventTarget, 'timestamp'> = { resource: request.resource, mode: eventModeOf(request.kind), permits, owner };
    this.emit({ type: 'requested', ...target, tryOnly, timestamp: Date.now() });
    const started = performance.now();
    let handle: LockHandle | null;
    try {
      handle = await obtain();
    } catch (error) {
      if (this.observed) this.emit(this.failure(target, error, performance.now() - started));
      throw error;
    }
    const grantedAt = performance.now();
    if (!handle) {
      if (this.observed) this.emit({ type: 'timed-out', ...target, waitMs: grantedAt - started, tryOnly, timestamp: Date.now() });
      return null;
    }
    // Answered by the lock context from a lock it held or was taking: ZooKeeper was not asked.
    const reentrant = handle instanceof ReentrantHandle && handle.reentrant;
    const fencingToken = handle.fencingToken;
    if (this.observed) {
      this.emit({ type: 'acquired', ...target, waitMs: grantedAt - started, reentrant, fencingToken, timestamp: Date.now() });
    }
    if (!reentrant) this.reportLoss(handle.signal, target, grantedAt, fencingToken);
    if (!reentrant && request.onReleaseRequest) this.reportRequest(handle.releaseRequested, target, grantedAt, fencingToken);
    const released = (): void => {
      if (!this.observed) return;
      this.emit({ type: 'released', ...target, holdMs: performance.now() - grantedAt, reentrant, fencingToken, timestamp: Date.now() });
    };
    // A context's handle reports its own release; a lock taken outside any context is wrapped.
    if (handle instanceof ReentrantHandle) {
      handle.onReleased = released;
      return handle;
    }
    return new ObservedHandle(handle, released);
  }

  private failure(target: Omit<LockEventTarget, 'timestamp'>, error: unknown, waitMs: number): LockEvent {
    const timestamp = Date.now();
    if (error instanceof LockTimeoutError) return { type: 'timed-out', ...target, waitMs, tryOnly: false, timestamp };
    if (error instanceof LockAbortedError) return { type: 'aborted', ...target, waitMs, timestamp };
    const errorName = error instanceof Error ? error.name : typeof error;
    return { type: 'failed', ...target, waitMs, errorName, error, timestamp };
  }

  /** Listens for a release request to a revocable lock taken from ZooKeeper (never removed, as reportLoss). */
  private reportRequest(signal: AbortSignal, target: Omit<LockEventTarget, 'timestamp'>, grantedAt: number, fencingToken: string): void {
    signal.addEventListener(
      'abort',
      () => {
        if (!this.observed) return;
        this.emit({ type: 'release-requested', ...target, holdMs: performance.now() - grantedAt, fencingToken, timestamp: Date.now() });
      },
      { once: true },
    );
  }

  /**
   * Listens for the loss of a lock taken from ZooKeeper. Never removed: a released lock's signal
   * never aborts, and the listener goes away with the lock.
   */
  private reportLoss(signal: AbortSignal, target: Omit<LockEventTarget, 'timestamp'>, grantedAt: number, fencingToken: string): void {
    signal.addEventListener(
      'abort',
      () => {
        const error: unknown = signal.reason;
        if (!this.observed || !(error instanceof LockLostError)) return;
        this.emit({
          type: 'lost',
          ...target,
          holdMs: performance.now() - grantedAt,
          fencingToken,
          errorName: error.name,
          reason: error.reason,
          error,
          timestamp: Date.now(),
        });
      },
      { once: true },
    );
  }
}

/** How events name a kind of lock: its mode, or `'semaphore'` when it has permits. */
function eventModeOf(kind: LockKind): LockMode | 'semaphore' {
  return kind.permits === undefined ? (kind.mode ?? 'exclusive') : 'semaphore';
}

/** The caller's handle while events are observed: the same lock, and its release is reported. */
class ObservedHandle extends ForwardingHandle {
  constructor(
    inner: LockHandle,
    private readonly released: () => void,
  ) {
    super(inner);
  }

  async release(): Promise<void> {
    await this.inner.release();
    this.released();
  }
}

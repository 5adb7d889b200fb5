import type { LeadershipEnd, LeadershipLostError, LockLossReason, LockLostError } from '../errors.js';
import type { LockMode } from '../recipes/lock-kind.js';
import type { ConnectionState } from '../zookeeper/zk-connection-like.js';

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

/** The ZooKeeper connection changed state (see ConnectionState). */
export interface LockConnectionEvent {
  readonly type: 'connection';
  readonly state: ConnectionState;
  /** The session's id, hex ('' when closed before any session). */
  readonly sessionId: string;
  /** In ms since the epoch. */
  readonly timestamp: number;
}

/**
 * Why a run was skipped: its lock was busy, its scheduled tick already ran on some instance, or
 * (`@Leader`) this instance does not lead its group.
 */
export type LockSkipReason = 'busy' | 'ran-this-tick' | 'not-leader';

/**
 * A run was skipped: a `@DistributedLock` method with `onBusy: 'skip'` found its lock busy, or a
 * scheduled method found its tick already run (see `oncePerTick`). The method was not called and
 * resolved undefined. Not an error.
 */
export interface LockSkippedEvent extends Omit<LockEventTarget, 'mode'> {
  readonly type: 'skipped';
  /** The kind of lock, or `'election'` for a `@Leader` call skipped because this instance does not lead. */
  readonly mode: LockEventTarget['mode'] | 'election';
  readonly reason: LockSkipReason;
}

/** This instance became the leader of an election's group (LockService.elect, @Leader, @OnLeadership). */
export interface LockElectedEvent {
  readonly type: 'elected';
  readonly group: string;
  /** This participant's id, as stored in its node. */
  readonly participantId: string;
  /** The term's token: above every earlier term's of the group. */
  readonly fencingToken: string;
  /** How long this instance waited in the queue, in ms (fractional). */
  readonly waitMs: number;
  /** In ms since the epoch. */
  readonly timestamp: number;
}

/**
 * This instance's term of leadership ended: lost as a lock is lost, or given up (resign, close,
 * shutdown). Its `signal` had aborted with `error` before this event.
 */
export interface LockTermEndedEvent {
  readonly type: 'term-ended';
  readonly group: string;
  readonly participantId: string;
  readonly fencingToken: string;
  /** How long this instance led, in ms (fractional). */
  readonly leadMs: number;
  /** `lost`, `resigned` or `left`. */
  readonly end: LeadershipEnd;
  /** How: the lock's loss reason, or `given-up` when resigned or left. */
  readonly reason: LockLossReason;
  readonly error: LeadershipLostError;
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
  | LockElectedEvent
  | LockTermEndedEvent
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
  /** The member the session is connected to now (`address:port`); undefined while disconnected (and in memory). */
  readonly server: string | undefined;
  /**
   * The members the connection uses now (`host:port`): the connect string's until the ensemble's
   * config names others (followEnsembleConfig); empty in memory.
   */
  readonly members: readonly string[];
  /** What talks to the server: `nestjs-zk-lock` (this package's native addon, on every real connection) or `in-memory` (the testing kit). */
  readonly addon: 'nestjs-zk-lock' | 'in-memory';
  /** Whether the connection to ZooKeeper uses TLS (the `tls` option). */
  readonly tls: boolean;
  /** Locks this LockService holds through ZooKeeper right now (reentrant joins not counted). */
  readonly heldLocks: number;
  /** The elections this LockService takes part in (LockService.elect, @Leader, @OnLeadership). */
  readonly elections: readonly ElectionInfo[];
}

/** One election this instance takes part in, as health checks and metrics report it. */
export interface ElectionInfo {
  readonly group: string;
  /** This participant's id. */
  readonly id: string;
  /** `failed`: it stopped for an error that retrying cannot cure (the group is a lock, say); see the log. */
  readonly state: 'leading' | 'following' | 'failed';
  /** The current term's token, while leading. */
  readonly fencingToken?: string;
}

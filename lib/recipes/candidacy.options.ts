import type { LockLayout } from '../queue/layouts.js';

/**
 * Options of one participant of an election: `new Candidacy(connection, group, options)`. The
 * elections of a LockService (`elect`, `@Leader`, `@OnLeadership`) take where the election lives and
 * the id (ElectOptions, LeaderOptions); their grace is the module's shutdownGraceMs.
 */
export interface CandidacyOptions {
  /**
   * This participant's id, stored in its node: what `leader()` and `participants()` return, and
   * what Curator's `getParticipants()` and kazoo's `contenders()` show. Its node holds at most 1024
   * bytes, the host name and pid included in this library's layout.
   * @default `<hostname>:<pid>`
   */
  id?: string;
  /**
   * Whose election recipe the group's nodes follow: this library's own, Curator's `LeaderLatch`
   * (`_c_<uuid>-latch-<seq>`) or kazoo's `Election` (its lock's nodes), to share a group with Java
   * or Python services. With `'curator'` or `'kazoo'`, give their path as `zkPath`.
   * @default 'nestjs-zk-lock' for `new Candidacy`; the module's `layout` for `elect` and the decorators
   */
  layout?: LockLayout;
  /**
   * The election's exact ZooKeeper path, instead of `<rootPath>/<encoded group>`; outside rootPath.
   * @default undefined (`<rootPath>/<encoded group>`)
   */
  zkPath?: string;
  /**
   * How long a leader that gives up (resign, close, shutdown) waits for its work to stop
   * (`LeaderHandle.stopsWith`) before its node is deleted and the next participant leads, in ms.
   * @default 5000
   */
  stopGraceMs?: number;
  /**
   * How long to wait before queueing again after a failure that may pass (a refused create), in ms;
   * doubled with each failure in a row, up to 30 s.
   * @default 1000
   */
  retryDelayMs?: number;
  /**
   * Told of each failure the candidacy retries (for logging).
   * @default undefined (the recipe's onBackgroundError)
   */
  onRetry?: (error: unknown) => void;
}

/** Where a participant stands. */
export type CandidacyState = 'following' | 'leading' | 'failed' | 'closed';

/** A change of leadership, as `onChange` listeners hear it. */
export interface LeadershipChange {
  /** Whether this instance leads now. */
  readonly leader: boolean;
  /** The term's token: the new one when elected, the ended one otherwise. */
  readonly fencingToken?: string;
  /** Elected: how long this instance waited in the queue, in ms. */
  readonly waitMs?: number;
  /** Ended: how long the term lasted, in ms. */
  readonly leadMs?: number;
  /** Ended: why (the LeadershipLostError's `end` and `reason` say more). */
  readonly error?: Error;
}

export const DEFAULT_STOP_GRACE_MS = 5000;
export const DEFAULT_RETRY_DELAY_MS = 1000;
/** The longest pause between two attempts to queue again (and the longest a failing leader stays out of line). */
export const MAX_RETRY_DELAY_MS = 30_000;

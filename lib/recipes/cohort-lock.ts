import { InvalidOptionsError, shown } from '../errors.js';
import { busy, Cohort } from './cohort.js';
import { FairLock } from './fair-lock.js';
import type { LockHandle } from './lock-handle.js';
import type { GrantedLock } from './granted-lock.js';
import type { LockRecipe, RecipeAcquireOptions } from './recipe-runtime.js';
import type { QueueLock } from './queue-lock.js';
import { checkMs } from '../shared/durations.js';

/** How long a process may keep a contended lock for its own callers. */
export interface CohortOptions {
  /**
   * While a caller of another process (or another kind of lock) waits in ZooKeeper, at most this
   * many handoffs in a row from one local caller to the next before the lock goes back to ZooKeeper.
   * @default 16
   */
  maxHandoffs?: number;
  /**
   * While a caller of another process waits in ZooKeeper, the longest time in ms the process keeps
   * the lock through local handoffs, counted from the ZooKeeper grant.
   * @default 50
   */
  maxHoldMs?: number;
}

/** A CohortLock's cohorts, and the locks one caller holds or waits for alone, by one kind of key. */
interface CohortTables {
  readonly cohorts: Map<string, Cohort>;
  readonly alone: Set<string>;
}

export const DEFAULT_COHORT = { maxHandoffs: 16, maxHoldMs: 50 } as const;

/** An exclusive queue (behind FairLock, ReadWriteLock.write, and Curator's and kazoo's) a cohort can stand in front of. */
type ExclusiveQueue = QueueLock;

/**
 * The cohort queue: callers of one process that want the same exclusive lock queue here, first
 * come, first served, behind one ZooKeeper node that holds the process's place in the ZooKeeper
 * queue. The lock passes from one local caller to the next without a request to ZooKeeper; each
 * holder still gets its own handle, its own fencing token (the grant's token, with which holder of
 * the grant it is as its last part) and the lost-lock signal of the session. Other processes are never starved: once
 * `maxHandoffs` or `maxHoldMs` is reached, the next handoff first looks whether anyone else waits in
 * ZooKeeper, and if so gives the node back (the remaining local callers queue again, at the end).
 *
 * A cohort forms only when it is needed: a caller alone in the process on its resource takes a node
 * of its own, as without the cohort, and costs only the mark by which a second caller finds it (about
 * 200 bytes while it waits or holds). A second caller that comes while the
 * first waits or holds starts the cohort; its node queues behind the first one's, and every later
 * caller of the process queues behind it, locally.
 */
export class CohortLock implements LockRecipe {
  /** Locks named by resource, keyed by the name itself (no string is built per acquire). */
  private readonly byResource: CohortTables = { cohorts: new Map(), alone: new Set() };
  /** Locks taken at a `zkPath`, keyed by that path. */
  private readonly atPath: CohortTables = { cohorts: new Map(), alone: new Set() };
  /** @internal CohortSettings */
  readonly inner: ExclusiveQueue;
  /** @internal CohortSettings */
  readonly maxHandoffs: number;
  /** @internal CohortSettings */
  readonly maxHoldMs: number;
  /** Failures of clean-up nobody waits for (a grant that came when no caller wanted it any more). @internal CohortSettings */
  readonly report: (error: unknown) => void;

  constructor(inner: FairLock, options?: CohortOptions);
  /** @internal the queue of any exclusive kind (LockService's write, Curator's and kazoo's), and where clean-up failures go */
  constructor(inner: ExclusiveQueue, options: CohortOptions | undefined, report: (error: unknown) => void);
  constructor(inner: FairLock | ExclusiveQueue, options: CohortOptions = {}, report: (error: unknown) => void = () => undefined) {
    this.inner = inner instanceof FairLock ? inner.queue : inner;
    this.report = report;
    this.maxHandoffs = wholeCount(options.maxHandoffs, 'cohort.maxHandoffs', DEFAULT_COHORT.maxHandoffs);
    this.maxHoldMs = checkMs(options.maxHoldMs, 'cohort.maxHoldMs', { max: Number.MAX_VALUE }) ?? DEFAULT_COHORT.maxHoldMs;
  }

  // The library's own code and tests get the granted node itself; users, as the published types say, a LockHandle.
  /** @internal */
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<GrantedLock>;
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<LockHandle>;
  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<GrantedLock> {
    return this.take(resource, options, false) as Promise<GrantedLock>;
  }

  /** @internal */
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<GrantedLock | null>;
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<LockHandle | null>;
  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<GrantedLock | null> {
    return this.take(resource, options, true);
  }

  /** Callers of this process waiting for `resource` in its cohort queue. */
  localWaiters(resource: string, zkPath?: string): number {
    return this.tablesFor(zkPath).cohorts.get(zkPath ?? resource)?.waiting ?? 0;
  }

  /**
   * LockTaker: how LockService takes it. Not async: a waiting caller keeps no suspended call here
   * (heap per waiting acquire). @internal
   */
  take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<GrantedLock | null> {
    try {
      const { zkPath } = options;
      const tables = zkPath === undefined ? this.byResource : this.atPath; // (tablesFor, inline: one call less per acquire)
      const key = zkPath ?? resource;
      let cohort = tables.cohorts.get(key);
      if (!cohort && !tables.alone.has(key)) return this.acquireAlone(resource, options, tryOnly, tables.alone, key);
      if (!cohort) {
        // Wanted by another caller of this process: not free right now.
        if (tryOnly || options.waitTimeoutMs === 0) return busy(resource, tryOnly);
        cohort = this.openCohort(resource, zkPath, tables.cohorts, key);
      }
      return cohort.acquire(options, tryOnly);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** The only caller of the process on its lock: its own node, marked until it has no lock. */
  private acquireAlone(resource: string, options: RecipeAcquireOptions, tryOnly: boolean, alone: Set<string>, key: string): Promise<GrantedLock | null> {
    const { onEnd, onNoLock } = options;
    const ended = (): void => {
      alone.delete(key);
    };
    // (The onEnd wrapper clears the mark itself rather than calling `ended`: one call less per release.)
    // Field by field, not `...options`: the spread of the caller's options object cost about 8 µs of
    // CPU per uncontended acquire against a real session (V8's object-clone path; measured with a
    // FairLock / LockService / LockService-without-cohort loop, process.cpuUsage per cycle).
    // Every field listed (a new option must be passed on here too: the type requires each key).
    const own: { [K in keyof Required<RecipeAcquireOptions>]: RecipeAcquireOptions[K] } = {
      waitTimeoutMs: options.waitTimeoutMs,
      signal: options.signal,
      data: options.data,
      zkPath: options.zkPath,
      onReleaseRequest: options.onReleaseRequest,
      onEnd: onEnd
        ? (lock) => {
            alone.delete(key);
            onEnd(lock);
          }
        : ended,
      onNoLock: onNoLock ? () => (ended(), onNoLock()) : ended,
      // Elections take their queue directly (Candidacy on a QueueLock): a term made here would not
      // run this onEnd, and the resource would stay marked.
      candidate: undefined,
    };
    alone.add(key);
    try {
      // Straight to the queue's runtime (QueueLock.take would only forward): the lone caller's own node.
      return this.inner.runtime.acquire(resource, own, tryOnly, this.inner.place);
    } catch (error) {
      ended();
      throw error;
    }
  }

  private openCohort(resource: string, zkPath: string | undefined, cohorts: Map<string, Cohort>, key: string): Cohort {
    this.inner.pathFor(resource, zkPath); // refuses a name or zkPath that cannot be a lock, before anything queues
    const created: Cohort = new Cohort(resource, zkPath, this, () => {
      if (cohorts.get(key) === created) cohorts.delete(key);
    });
    cohorts.set(key, created);
    return created;
  }

  private tablesFor(zkPath: string | undefined): CohortTables {
    return zkPath === undefined ? this.byResource : this.atPath;
  }
}

function wholeCount(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isInteger(value)) {
    throw new InvalidOptionsError(name, `must be a whole number of at least 0, got ${shown(value)}`);
  }
  return value;
}

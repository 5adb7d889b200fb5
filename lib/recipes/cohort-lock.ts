import { InvalidOptionsError } from '../errors.js';
import { Cohort, type CohortSettings } from './cohort-queue.js';
import type { HeldLock } from './held-lock.js';
import type { LockRecipe, RecipeAcquireOptions } from './recipe-runtime.js';

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

export const DEFAULT_COHORT = { maxHandoffs: 16, maxHoldMs: 50 } as const;

/** An exclusive queue recipe (FairLock, ReadWriteLock.write) a cohort can stand in front of. */
export type ExclusiveQueueRecipe = LockRecipe & { pathOf(resource: string): string };

/**
 * The cohort queue: callers of one process that want the same exclusive lock queue here, first
 * come, first served, behind one ZooKeeper node that holds the process's place in the ZooKeeper
 * queue. The lock passes from one local caller to the next without a request to ZooKeeper; each
 * holder still gets its own handle, its own fencing token (the grant's zxid, then which holder of
 * the grant it is) and the lost-lock signal of the session. Other processes are never starved: once
 * `maxHandoffs` or `maxHoldMs` is reached, the next handoff first looks whether anyone else waits in
 * ZooKeeper, and if so gives the node back (the remaining local callers queue again, at the end).
 */
export class CohortLock implements LockRecipe, CohortSettings {
  private readonly cohorts = new Map<string, Cohort>();
  readonly maxHandoffs: number;
  readonly maxHoldMs: number;

  constructor(
    readonly inner: ExclusiveQueueRecipe,
    options: CohortOptions = {},
  ) {
    this.maxHandoffs = positive(options.maxHandoffs, 'cohort.maxHandoffs', DEFAULT_COHORT.maxHandoffs, true);
    this.maxHoldMs = positive(options.maxHoldMs, 'cohort.maxHoldMs', DEFAULT_COHORT.maxHoldMs, false);
  }

  // Not async: a waiting caller keeps no suspended call here (heap per waiting acquire).
  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<HeldLock> {
    try {
      return this.cohortOf(resource).acquire(options, false) as Promise<HeldLock>;
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<HeldLock | null> {
    try {
      return this.cohortOf(resource).acquire(options, true);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Callers of this process waiting for `resource` in its cohort queue. */
  localWaiters(resource: string): number {
    return this.cohorts.get(resource)?.waiting ?? 0;
  }

  private cohortOf(resource: string): Cohort {
    let cohort = this.cohorts.get(resource);
    if (!cohort) {
      this.inner.pathOf(resource); // refuses a name that cannot be a lock, before anything queues
      const created: Cohort = new Cohort(resource, this, () => {
        if (this.cohorts.get(resource) === created) this.cohorts.delete(resource);
      });
      this.cohorts.set(resource, created);
      cohort = created;
    }
    return cohort;
  }
}

function positive(value: number | undefined, name: string, fallback: number, whole: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    throw new InvalidOptionsError(name, `must be a ${whole ? 'whole ' : ''}number of at least 0, got ${String(value)}`);
  }
  return value;
}

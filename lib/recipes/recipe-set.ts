import { type LockKindOptions, validatePermits } from './lock-kind.js';
import type { GrantedLock } from './granted-lock.js';
import { type InspectOptions, inspectLock } from './inspect.js';
import { type InspectAllOptions, inspectAll, type LockOverview } from './inspect-all.js';
import { releaseTarget, type ReleaseRequestOptions, type ReleaseRequestResult, requestRelease } from './release-request.js';
import type { LockInspection } from './lock-inspection.js';
import type { SessionSource } from '../queue/queue.types.js';
import { type ClientIdentity, strangersWhoMayWrite } from '../zookeeper/zk-acl.js';
import { QueueLock } from './queue-lock.js';
import { DowngradeLock } from './read-write-lock.js';
import { exclusiveDriver, readDriver, revocableExclusiveDriver, revocableWriteDriver, semaphoreDriver, writeDriver } from '../queue/lock-driver.js';
import { InvalidOptionsError } from '../errors.js';
import { LEASE_POOLS, LeasePool } from './lease-pool.js';
import { DEFAULT_LAYOUT, type LockLayout, validateLayout } from '../queue/layouts.js';
import {
  curatorMutexDriver,
  curatorReadDriver,
  curatorWriteDriver,
  kazooLockDriver,
  kazooReadDriver,
  kazooWriteDriver,
} from '../queue/foreign-drivers.js';
import { type LockTaker, type RecipeAcquireOptions, type RecipeOptions, RecipeRuntime } from './recipe-runtime.js';
import { SimpleLock } from './simple-lock.js';
import { CohortLock, type CohortOptions } from './cohort-lock.js';

export interface RecipeSetOptions extends RecipeOptions {
  /**
   * The layout of locks whose acquire does not say: this library's own, or Apache Curator's or
   * kazoo's recipes, to share locks with Java or Python services.
   * @default 'nestjs-zk-lock'
   */
  layout?: LockLayout;
  /**
   * The cohort queue for exclusive and write locks: callers of this process that want the same
   * lock share one ZooKeeper node and pass the lock between them locally (bounded when others
   * wait). `false` gives every caller its own node.
   * @default {} (on, with CohortLock's defaults)
   */
  cohort?: CohortOptions | false;
}


/** The queue recipes of one foreign layout (see layouts.ts). */
interface ForeignRecipes {
  readonly exclusive: LockTaker;
  readonly write: LockTaker;
  readonly read: LockTaker;
  /** Without the cohort: a revocable holder's node is its own. */
  readonly revocableExclusive: LockTaker;
  readonly revocableWrite: LockTaker;
}

const FOREIGN_DRIVERS = {
  curator: { exclusive: curatorMutexDriver, write: curatorWriteDriver, read: curatorReadDriver },
  kazoo: { exclusive: kazooLockDriver, write: kazooWriteDriver, read: kazooReadDriver },
} as const;

/** Every recipe of one client, sharing one runtime: what LockService picks from by mode and layout. */
export class RecipeSet {
  readonly runtime: RecipeRuntime;
  private readonly read: QueueLock;
  private readonly downgrades: DowngradeLock;
  private readonly simple: SimpleLock;
  /**
   * What exclusive and write requests use: the cohort in front of the queue, or the queue itself.
   * `exclusive` is what recipeFor gives for no mode nor permits in our layout, not revocable: the
   * default request's recipe, resolved once (read it to spare the call on every acquire).
   */
  readonly exclusive: LockTaker;
  private readonly write: LockTaker;
  private readonly semaphores = new Map<number, QueueLock>();
  /** The layout of acquires that do not say. */
  readonly layout: LockLayout;
  private readonly cohort: CohortOptions | false;
  private readonly foreign = new Map<LockLayout, ForeignRecipes>();
  /** Our revocable exclusive and write locks (no cohort, nodes that never grant by write), once asked for. */
  private revocable: { readonly exclusive: LockTaker; readonly write: LockTaker } | undefined;
  /** Curator's and kazoo's semaphores, by layout and permits. */
  private readonly leasePools = new Map<string, LeasePool>();

  constructor(sessions: SessionSource, options: RecipeSetOptions = {}) {
    this.layout = validateLayout(options.layout) ?? DEFAULT_LAYOUT;
    this.runtime = new RecipeRuntime(sessions, options);
    this.read = new QueueLock(this.runtime, readDriver);
    this.downgrades = new DowngradeLock(this.runtime);
    this.simple = new SimpleLock(this.runtime);
    this.cohort = options.cohort ?? {};
    this.exclusive = this.withCohort(new QueueLock(this.runtime, exclusiveDriver));
    this.write = this.withCohort(new QueueLock(this.runtime, writeDriver));
  }

  /** The cohort queue in front of an exclusive queue recipe, unless it is off. */
  private withCohort(recipe: QueueLock): LockTaker {
    const { cohort } = this;
    return cohort === false ? recipe : new CohortLock(recipe, cohort, (error) => this.runtime.remover.report(error));
  }

  /**
   * The recipe for a mode or a semaphore's permits (validated), in `layout`.
   * @throws InvalidOptionsError for a kind the layout's own clients do not have.
   */
  recipeFor(kind: LockKindOptions, layout: LockLayout = this.layout, revocable = false): LockTaker {
    if (layout !== DEFAULT_LAYOUT) return this.foreignRecipe(kind, layout, revocable);
    if (revocable && kind.permits === undefined && (kind.mode === undefined || kind.mode === 'exclusive' || kind.mode === 'write')) {
      // Own nodes that never grant by write, so that a request written into them grants nobody.
      this.revocable ??= {
        exclusive: new QueueLock(this.runtime, revocableExclusiveDriver),
        write: new QueueLock(this.runtime, revocableWriteDriver),
      };
      return kind.mode === 'write' ? this.revocable.write : this.revocable.exclusive;
    }
    if (kind.permits !== undefined) {
      const permits = validatePermits(kind.permits);
      let semaphore = this.semaphores.get(permits);
      if (!semaphore) {
        semaphore = new QueueLock(this.runtime, semaphoreDriver(permits));
        this.semaphores.set(permits, semaphore);
      }
      return semaphore;
    }
    switch (kind.mode) {
      case 'read':
        return this.read;
      case 'write':
        return this.write;
      case 'simple':
        return this.simple;
      default:
        return this.exclusive;
    }
  }

  private foreignRecipe(kind: LockKindOptions, layout: Exclude<LockLayout, typeof DEFAULT_LAYOUT>, revocable: boolean): LockTaker {
    if (kind.mode === 'simple') {
      throw new InvalidOptionsError('layout', `mode 'simple' is not available in the '${layout}' layout: use mode 'exclusive', 'read' or 'write', or permits`);
    }
    if (kind.permits !== undefined) {
      const permits = validatePermits(kind.permits);
      const key = `${layout}:${permits}`;
      let pool = this.leasePools.get(key);
      if (!pool) {
        pool = new LeasePool(this.runtime, LEASE_POOLS[layout], permits);
        this.leasePools.set(key, pool);
      }
      return pool;
    }
    let recipes = this.foreign.get(layout);
    if (!recipes) {
      const drivers = FOREIGN_DRIVERS[layout];
      const exclusive = new QueueLock(this.runtime, drivers.exclusive);
      const write = new QueueLock(this.runtime, drivers.write);
      recipes = {
        exclusive: this.withCohort(exclusive),
        write: this.withCohort(write),
        read: new QueueLock(this.runtime, drivers.read),
        revocableExclusive: exclusive,
        revocableWrite: write,
      };
      this.foreign.set(layout, recipes);
    }
    if (kind.mode === 'read') return recipes.read;
    if (kind.mode === 'write') return revocable ? recipes.revocableWrite : recipes.write;
    return revocable ? recipes.revocableExclusive : recipes.exclusive;
  }

  /** A read lock under a held write or exclusive lock. */
  downgrade(writeLock: GrantedLock, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<GrantedLock> {
    return this.downgrades.acquireUnder(writeLock, options);
  }

  /**
   * Checks who may create or delete lock nodes under rootPath. A missing rootPath is created now,
   * with the configured ACL. Returns what is wrong, or undefined.
   */
  async rootAclProblem(owner: ClientIdentity): Promise<string | undefined> {
    const { rootPath } = this.runtime;
    const session = await this.runtime.sessions.session();
    await this.runtime.parents.ensureRoot(session, AbortSignal.timeout(this.runtime.connectWaitMs));
    const current = await session.getAcl(rootPath);
    const strangers = strangersWhoMayWrite(current, owner);
    if (strangers.length === 0) return undefined;
    const who = strangers.map((entry) => `${entry.scheme}:${entry.id}`).join(', ');
    return (
      `the ACL of rootPath ${rootPath} lets ${who} create or delete nodes there, so any such client can ` +
      (owner.digest || owner.saslNames
        ? 'take or break locks; set its ACL to this client\'s identity (setAcl), or use a new rootPath, which is created protected'
        : 'take or break locks; set the digest or sasl option so that lock paths are created protected (a new rootPath, or fix the ACL of this one)')
    );
  }

  async inspect(resource: string, options: InspectOptions = {}): Promise<LockInspection> {
    return this.withLocalWaiters(await inspectLock(this.runtime, resource, options));
  }

  /** Every lock under rootPath (see inspectAll), with the callers of this process waiting in its cohort queues. */
  async inspectAll(options: InspectAllOptions): Promise<LockOverview> {
    const overview = await inspectAll(this.runtime, options);
    return { ...overview, locks: overview.locks.map((lock) => this.withLocalWaiters(lock)) };
  }

  /** A release request (see release-request.ts) to the holders of a resource, or of `{ zkPath, layout }`. */
  requestRelease(
    target: string | { resource?: string; zkPath?: string; layout?: LockLayout },
    options: ReleaseRequestOptions,
  ): Promise<ReleaseRequestResult> {
    const { resource, zkPath, layout } = releaseTarget(target);
    const path = this.runtime.pathFor(resource ?? (zkPath as string), zkPath);
    return requestRelease(this.runtime, path, validateLayout(layout) ?? this.layout, options);
  }

  /**
   * Adds the callers of this process waiting in its cohort queues, which ZooKeeper does not see: for
   * locks of our layout under rootPath (the cohort queues know their other locks by another key).
   */
  withLocalWaiters(inspection: LockInspection): LockInspection {
    if (inspection.layout !== DEFAULT_LAYOUT || inspection.path !== this.runtime.pathOf(inspection.resource)) return inspection;
    let localWaiters = 0;
    for (const recipe of [this.exclusive, this.write]) {
      if (recipe instanceof CohortLock) localWaiters += recipe.localWaiters(inspection.resource);
    }
    return { ...inspection, localWaiters };
  }
}

import type { GrantedLock } from './granted-lock.js';
import { rejectOnThrow } from '../shared/promises.js';
import type { LockDriver } from '../queue/lock-driver.js';
import type { SessionSource, UnderWrite } from '../queue/queue.types.js';
import {
  type LockRecipe,
  type LockTaker,
  type QueuePlace,
  type RecipeAcquireOptions,
  type RecipeOptions,
  type RecipeRuntime,
  runtimeOf,
} from './recipe-runtime.js';

/**
 * A lock type made of a queue of sequential nodes and a driver that says who holds (behind FairLock,
 * ReadWriteLock's halves, Semaphore, elections, and the Curator and kazoo layouts' locks).
 */
export class QueueLock implements LockRecipe, LockTaker {
  /** @internal the runtime its acquires run in (CohortLock takes places from it directly) */
  readonly runtime: RecipeRuntime;
  /** @internal where an acquire of a resource queues: the resource's znode (or its zkPath), with this driver */
  readonly place: QueuePlace;

  constructor(
    source: SessionSource | RecipeRuntime,
    private readonly driver: LockDriver,
    options?: RecipeOptions,
  ) {
    this.runtime = runtimeOf(source, options);
    this.place = { parent: undefined, driver, under: undefined };
  }

  get rootPath(): string {
    return this.runtime.rootPath;
  }

  /** The znode under which a resource's queue lives. */
  pathOf(resource: string): string {
    return this.runtime.pathOf(resource);
  }

  /** The znode of one acquire's queue: its `zkPath` (checked), else the resource's. */
  pathFor(resource: string, zkPath: string | undefined): string {
    return this.runtime.pathFor(resource, zkPath);
  }

  /** Waits for the lock; never null. */
  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<GrantedLock> {
    return rejectOnThrow(() => this.take(resource, options, false) as Promise<GrantedLock>);
  }

  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<GrantedLock | null> {
    return this.take(resource, options, true);
  }

  /**
   * `under`, `driver` and `parent` are given only for a downgrade: the held write, Curator's
   * downgrade read, and the held write's own queue (already checked).
   */
  take(
    resource: string,
    options: RecipeAcquireOptions,
    tryOnly: boolean,
    under?: UnderWrite,
    driver = this.driver,
    parent?: string,
  ): Promise<GrantedLock | null> {
    const place = under === undefined && driver === this.driver && parent === undefined ? this.place : { parent, driver, under };
    return this.runtime.acquire(resource, options, tryOnly, place);
  }
}

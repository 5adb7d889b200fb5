import { exclusiveDriver } from '../queue/lock-driver.js';
import type { SessionSource } from '../queue/queue.types.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import type { GrantedLock } from './granted-lock.js';
import type { LockHandle } from './lock-handle.js';
import { QueueLock } from './queue-lock.js';
import type { LockRecipe, RecipeAcquireOptions, RecipeOptions, RecipeRuntime } from './recipe-runtime.js';

/**
 * The fair exclusive lock from ZooKeeper's recipes: EPHEMERAL_SEQUENTIAL nodes under
 * `<rootPath>/<encoded resource>`, the lowest holds, each waiter watches only its predecessor.
 * Needs no Nest: `new FairLock(connection).acquire('orders:42')`.
 */
export class FairLock implements LockRecipe {
  /** The queue behind it (CohortLock stands in front of this one). @internal */
  readonly queue: QueueLock;

  constructor(connection: ZkConnectionLike, options?: RecipeOptions);
  /** @internal a session source of its own (tests), or a runtime shared with other recipes */
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions);
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    this.queue = new QueueLock(source, exclusiveDriver, options);
  }

  // The library's own code and tests get the granted node itself; users, as the published types say, a LockHandle.
  /** @internal */
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<GrantedLock>;
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<LockHandle>;
  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<GrantedLock> {
    return this.queue.acquire(resource, options);
  }

  /** @internal */
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<GrantedLock | null>;
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<LockHandle | null>;
  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<GrantedLock | null> {
    return this.queue.tryAcquire(resource, options);
  }
}

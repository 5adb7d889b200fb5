import { semaphoreDriver } from '../queue/lock-driver.js';
import type { SessionSource } from '../queue/queue.types.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import { validatePermits } from './lock-kind.js';
import type { GrantedLock } from './granted-lock.js';
import type { LockHandle } from './lock-handle.js';
import { QueueLock } from './queue-lock.js';
import type { LockRecipe, RecipeAcquireOptions, RecipeOptions, RecipeRuntime } from './recipe-runtime.js';

/**
 * A fair counting semaphore: up to `permits` holders of a resource at once, first come, first
 * served, and a release wakes only the waiter that may proceed. Every user of one resource must
 * agree on `permits` (IncompatibleLockError otherwise). Leases are ephemeral: they die with their
 * session.
 */
export class Semaphore implements LockRecipe {
  private readonly queue: QueueLock;

  constructor(connection: ZkConnectionLike, options: RecipeOptions & { permits: number });
  /** @internal a session source of its own (tests), or a runtime shared with other recipes */
  constructor(source: SessionSource | RecipeRuntime, options: RecipeOptions & { permits: number });
  constructor(source: SessionSource | RecipeRuntime, options: RecipeOptions & { permits: number }) {
    this.queue = new QueueLock(source, semaphoreDriver(validatePermits(options.permits)), options);
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

import { semaphoreDriver } from '../queue/lock-driver.js';
import type { SessionSource } from '../queue/queue.types.js';
import { validatePermits } from './lock-kind.js';
import { QueueLock } from './queue-lock.js';
import type { RecipeOptions, RecipeRuntime } from './recipe-runtime.js';

/**
 * A fair counting semaphore: up to `permits` holders of a resource at once, first come, first
 * served, and a release wakes only the waiter that may proceed. Every user of one resource must
 * agree on `permits` (IncompatibleLockError otherwise). Leases are ephemeral: they die with their
 * session.
 */
export class Semaphore extends QueueLock {
  constructor(source: SessionSource | RecipeRuntime, options: RecipeOptions & { permits: number }) {
    super(source, semaphoreDriver(validatePermits(options.permits)), options);
  }
}

import { exclusiveDriver } from '../queue/lock-driver.js';
import type { SessionSource } from '../queue/queue.types.js';
import { QueueLock } from './queue-lock.js';
import type { RecipeOptions, RecipeRuntime } from './recipe-runtime.js';

/**
 * The fair exclusive lock from ZooKeeper's recipes: EPHEMERAL_SEQUENTIAL nodes under
 * `<rootPath>/<encoded resource>`, the lowest holds, each waiter watches only its predecessor.
 * Needs no Nest: `new FairLock(connection).acquire('orders:42')`.
 */
export class FairLock extends QueueLock {
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    super(source, exclusiveDriver, options);
  }
}

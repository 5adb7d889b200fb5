import { hostname } from 'node:os';
import type { LockRequest } from '../context/lock-request.js';
import type { LockTaker } from '../context/lock-context.js';
import type { HeldLock } from '../recipes/held-lock.js';
import type { RecipeSet } from '../recipes/recipe-set.js';
import { rejectOnThrow } from '../shared/promises.js';
import type { LockServiceShutdown } from './lock-service.shutdown.js';

/**
 * How LockService takes a new lock from ZooKeeper, for the lock context: the recipe for the
 * request's kind (or a downgrade under the context's own write), the holder's description stored in
 * the node, and shutdown's part (its stop signal, the locks it must release, its errors).
 */
export class RecipeTaker implements LockTaker {
  private readonly hostData = { host: hostname(), pid: process.pid };
  private readonly anonymousData = Buffer.from(JSON.stringify(this.hostData));

  constructor(
    private readonly recipes: RecipeSet,
    private readonly shutdown: LockServiceShutdown,
  ) {}

  assertOpen(resource: string): void {
    this.shutdown.assertOpen(resource);
  }

  take(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: HeldLock | undefined): Promise<HeldLock | null> {
    // Only what these two callbacks use is kept while the acquire waits (see begin): the resource,
    // not the whole request.
    const { shutdown } = this;
    const { resource } = request;
    return this.begin(request, tryOnly, owner, under).then(
      (lock) => {
        if (lock?.isHeld()) shutdown.adopt(lock);
        return lock;
      },
      (error: unknown) => {
        throw shutdown.explain(error, resource);
      },
    );
  }

  /** Starts the acquire; a separate call, so that a waiting acquire does not keep its arguments. */
  private begin(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: HeldLock | undefined): Promise<HeldLock | null> {
    return rejectOnThrow(() => {
      const { recipes, shutdown } = this;
      const data = this.nodeData(owner);
      if (under) {
        const { onReleaseRequest } = request;
        const read = recipes.downgrade(under, { signal: request.signal, data, onEnd: shutdown.forget });
        // Revocable as any other lock: a request written into the read's node reaches this holder.
        return onReleaseRequest ? read.then((lock) => (lock.watchForRelease(onReleaseRequest), lock)) : read;
      }
      const recipe = recipes.recipeFor(request.kind, request.layout, request.onReleaseRequest !== undefined);
      const options = {
        waitTimeoutMs: request.waitTimeoutMs,
        signal: shutdown.waitSignal(request.signal),
        data,
        zkPath: request.zkPath,
        onReleaseRequest: request.onReleaseRequest,
        onEnd: shutdown.forget,
      };
      return tryOnly ? recipe.tryAcquire(request.resource, options) : recipe.acquire(request.resource, options);
    });
  }

  /** What a lock node stores about its holder: host, pid and, when known, the request or job. */
  private nodeData(owner: string | undefined): Buffer {
    if (owner === undefined) return this.anonymousData;
    return Buffer.from(JSON.stringify({ ...this.hostData, owner }));
  }
}

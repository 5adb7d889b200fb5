import { hostname } from 'node:os';
import type { GrantedLock } from '../recipes/granted-lock.js';
import type { RecipeSet } from '../recipes/recipe-set.js';
import type { LockRequest } from './lock-request.js';
import type { ShutdownGate } from './shutdown-gate.js';

/**
 * How a lock context takes a new lock from ZooKeeper, down to the recipes: the recipe for the
 * request's kind (or a downgrade under the context's own write), the holder's description stored in
 * the node, and the shutdown gate (its stop signal, the locks it must take away, its errors).
 */
export class NewLocks {
  private readonly hostData = { host: hostname(), pid: process.pid };
  private readonly anonymousData = Buffer.from(JSON.stringify(this.hostData));

  constructor(
    private readonly recipes: RecipeSet,
    /** What shutdown does to the locks taken here; `gate.assertOpen` refuses new ones once it began. */
    readonly gate: ShutdownGate,
  ) {}

  /**
   * A new lock for `request`, its node naming `owner`; with `under`, a read taken under that held
   * write of the same context (a downgrade: granted at once).
   *
   * Heap rule (the split start): this method keeps only `gate` and the resource for its two
   * callbacks, and `start` does the rest in a call of its own, so that a waiting acquire does not
   * keep the request, the options or the node data alive (`npm run bench -- --only heap`, "waiting
   * acquires"). Check: the callbacks below close over `gate` and `resource` only.
   */
  acquire(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: GrantedLock | undefined): Promise<GrantedLock | null> {
    const { gate } = this;
    const { resource } = request;
    return this.start(request, tryOnly, owner, under).then(
      (lock) => {
        if (lock?.isHeld()) gate.adopt(lock);
        return lock;
      },
      (error: unknown) => {
        throw gate.explain(error, resource);
      },
    );
  }

  /** Picks the recipe and starts its acquire (see the heap rule of `acquire`). */
  private start(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: GrantedLock | undefined): Promise<GrantedLock | null> {
    try {
      const { recipes, gate } = this;
      const data = owner === undefined ? this.anonymousData : this.nodeData(owner);
      if (under) {
        const { onReleaseRequest } = request;
        const read = recipes.downgrade(under, { signal: request.signal, data, onEnd: gate.forget });
        // Revocable as any other lock: a request written into the read's node reaches this holder.
        return onReleaseRequest ? read.then((lock) => (lock.watchForRelease(onReleaseRequest), lock)) : read;
      }
      const recipe = recipes.recipeFor(request.kind, request.layout, request.onReleaseRequest !== undefined);
      const options = {
        waitTimeoutMs: request.waitTimeoutMs,
        signal: gate.waitSignal(request.signal),
        data,
        zkPath: request.zkPath,
        onReleaseRequest: request.onReleaseRequest,
        onEnd: gate.forget,
      };
      return recipe.take(request.resource, options, tryOnly);
    } catch (error) {
      return Promise.reject(error as Error); // bad options or a bad name: a rejection, as every failure of an acquire
    }
  }

  /** What a lock node stores about its holder: host, pid and the request or job (anonymousData when that is unknown). */
  private nodeData(owner: string): Buffer {
    return Buffer.from(JSON.stringify({ ...this.hostData, owner }));
  }
}

import { IncompatibleLockError, LockUpgradeError } from '../errors.js';
import { contextKey, currentLockContext, type HeldEntry, type LockContext } from './lock-context.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import { type LockRequest, waitShared } from './lock-request.js';
import type { HeldLock } from '../recipes/held-lock.js';
import { ReentrantHandle } from './reentrant-handle.js';

/** How a LockService takes a lock from ZooKeeper, and whether it still may. */
export interface ContextTaker {
  take(context: LockContext | undefined): Promise<HeldLock | null>;
  /** @throws LockServiceClosedError */
  assertOpen(): void;
}

/**
 * The reentrancy rules of one LockService inside lock contexts: a request the context can answer
 * itself (it holds the lock, or is already waiting for it) never reaches ZooKeeper twice; a read asked
 * under the context's own write is a downgrade; a write asked under its own read is refused.
 * `scope` tells this service's locks apart from another LockService's in a shared context.
 */
export class ContextLocks {
  constructor(private readonly scope: string) {}

  obtain(request: LockRequest, tryOnly: boolean, taker: ContextTaker): Promise<LockHandle | null> {
    const context = currentLockContext();
    if (!context) {
      // Outside any context: straight to ZooKeeper, with no async call of its own kept while it waits.
      try {
        taker.assertOpen();
        return taker.take(undefined);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    }
    return this.obtainIn(context, request, tryOnly, taker);
  }

  private async obtainIn(context: LockContext, request: LockRequest, tryOnly: boolean, taker: ContextTaker): Promise<LockHandle | null> {
    const key = contextKey(this.scope, request.slot, request.resource);
    // Synchronous unless there is something to wait for, so that an acquire registers itself as
    // pending before the caller can start the next one (Promise.all of a write and a read).
    const ownWrite = this.ownWriteFirst(context, request);
    if (ownWrite) await ownWrite;
    const joined = this.joinHeld(context, key, request);
    if (joined) return joined;
    taker.assertOpen();
    const shared = context.pending.get(key);
    if (tryOnly) {
      if (shared) return null; // this context is still waiting for it: not free right now
      const lock = await taker.take(context);
      return lock && ReentrantHandle.join(context, key, lock, request.kind.permits);
    }
    if (shared) {
      // Two holders in one context asking at once share one queue entry (each within its own limits).
      if (shared.permits !== request.kind.permits) {
        throw new IncompatibleLockError(request.resource, `this context is waiting for it as a semaphore of ${shared.permits} permits, not ${request.kind.permits}`);
      }
      return ReentrantHandle.join(context, key, await waitShared(shared.lock, request), request.kind.permits);
    }
    const taking = taker.take(context) as Promise<HeldLock>;
    context.pending.set(key, { lock: taking, permits: request.kind.permits });
    const clear = (): void => {
      if (context.pending.get(key)?.lock === taking) context.pending.delete(key);
    };
    taking.then(clear, clear);
    return ReentrantHandle.join(context, key, await taking, request.kind.permits);
  }

  /** The lock `context` holds on `resource` through this service, the write first. */
  held(context: LockContext | undefined, resource: string): HeldLock | undefined {
    for (const slot of ['write', 'simple', 'semaphore', 'read'] as const) {
      const entry = context?.live(this.scope, slot, resource);
      if (entry) return entry.lock;
    }
    return undefined;
  }

  /** The write (or exclusive) lock `context` holds on `resource`, for a downgrade. */
  liveWrite(context: LockContext, resource: string): HeldEntry | undefined {
    return context.live(this.scope, 'write', resource);
  }

  /**
   * A read asked while the same context is still waiting for the write waits for that write first
   * (then it is a downgrade, granted at once); a write asked while the context waits for the read
   * could never be granted.
   */
  private ownWriteFirst(context: LockContext, request: LockRequest): Promise<unknown> | undefined {
    if (request.slot === 'read') {
      const write = context.pending.get(contextKey(this.scope, 'write', request.resource));
      // The write's own failure is its caller's to report; this read then queues as any read would.
      return write && waitShared(write.lock.catch(() => undefined), request);
    }
    if (request.slot === 'write' && context.pending.has(contextKey(this.scope, 'read', request.resource))) {
      throw new LockUpgradeError(request.resource);
    }
    return undefined;
  }

  /** The context's own lock that answers this request at once, or undefined to ask ZooKeeper. */
  private joinHeld(context: LockContext, key: string, request: LockRequest): LockHandle | undefined {
    const { resource, slot } = request;
    const entry = context.live(this.scope, slot, resource);
    if (entry) {
      if (slot === 'semaphore' && entry.permits !== request.kind.permits) {
        throw new IncompatibleLockError(resource, `this context holds it as a semaphore of ${entry.permits} permits, not ${request.kind.permits}`);
      }
      return ReentrantHandle.join(context, key, entry.lock, entry.permits);
    }
    if (slot === 'write' && context.live(this.scope, 'read', resource)) throw new LockUpgradeError(resource);
    return undefined;
  }
}

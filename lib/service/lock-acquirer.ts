import { LockLostError } from '../errors.js';
import {
  type AcquireOptions,
  checkRequest,
  type LockPlacement,
  type LockRequest,
  type RequestDefaults,
  validateLockContext,
} from '../context/lock-request.js';
import { currentLockContext, type ReentrantLocks, runByLockContextPolicy, runOutsideLockContext } from '../context/lock-context.js';
import type { MinimumHolds } from '../context/minimum-holds.js';
import type { ReleaseHooks } from '../context/holder-handle.js';
import type { LockEvents } from '../events/lock-events.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import type { LockKindOptions } from '../recipes/lock-kind.js';
import type { ElectionRegistry } from './election-registry.js';

/**
 * How LockService turns a call into a handle: the request resolved and checked once (name, kind,
 * placement, options; not an election's path), run by its lock context policy, then taken through
 * the context (reentrancy) or from ZooKeeper, with the release hooks it needs (events and spans,
 * the minimum hold) on its one handle.
 */
export class LockAcquirer {
  constructor(
    readonly defaults: RequestDefaults,
    /** This service's locks in the current request's or call's lock context. */
    readonly reentrantLocks: ReentrantLocks,
    private readonly events: LockEvents,
    private readonly holds: MinimumHolds,
    private readonly elections: ElectionRegistry,
  ) {}

  /** A request checked once: its options, and that its path is not one of this service's elections. */
  check(resource: string, kind: LockKindOptions & LockPlacement, options: AcquireOptions): LockRequest {
    const request = checkRequest(resource, kind, options, this.defaults);
    this.elections.assertNotElection(resource, request.zkPath);
    return request;
  }

  /** acquire and tryAcquire: by the request's lock context policy. Resolves null only for `tryOnly`. */
  acquire(resource: string, options: AcquireOptions, tryOnly: boolean): Promise<LockHandle | null> {
    try {
      const request = this.check(resource, options, options);
      const policy = validateLockContext(options.lockContext);
      if (policy === 'join') return this.take(request, tryOnly);
      // 'new': taken outside any context (the caller's own, as in a script), its node naming the context's owner.
      const owner = currentLockContext()?.owner;
      return runOutsideLockContext(() => this.take(withOwner(request, owner), tryOnly));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /**
   * withLock: `fn` runs in the lock context of the policy (the current one, or a new one), which the
   * lock joins, so that what `fn` does joins the lock.
   */
  withLock<T>(resource: string, fn: (lock: LockHandle) => T | Promise<T>, options: AcquireOptions): Promise<T> {
    let request: LockRequest;
    let policy: 'join' | 'new';
    try {
      policy = validateLockContext(options.lockContext);
      request = this.check(resource, options, options);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return runByLockContextPolicy(policy, () => this.holding(request, fn));
  }

  private async holding<T>(request: LockRequest, fn: (lock: LockHandle) => T | Promise<T>): Promise<T> {
    const lock = (await this.take(request, false))!; // never null when not tryOnly
    let result: T;
    try {
      result = await fn(lock);
    } finally {
      // Always release, so a reentrant holder is counted out even when the lock was lost meanwhile.
      await lock.release().catch((error: unknown) => {
        if (!(error instanceof LockLostError)) throw error; // the loss is reported below
      });
    }
    if (lock.signal.aborted) throw lock.signal.reason;
    return result;
  }

  /**
   * One checked request: the lock context answers, or takes a new lock from ZooKeeper; its handle
   * gets the release hooks it needs (events and spans when recorded, holdAtLeastMs when asked).
   */
  take(request: LockRequest, tryOnly: boolean): Promise<LockHandle | null> {
    const { holdAtLeastMs } = request;
    const { watched } = this.events;
    // Nothing hooks the release: the context's handle, or outside any context the granted lock itself.
    if (!watched && holdAtLeastMs === 0) return this.reentrantLocks.acquire(request, tryOnly);
    const hooks: ReleaseHooks | undefined = holdAtLeastMs > 0 ? { minimumHold: { ms: holdAtLeastMs, holds: this.holds } } : undefined;
    // Events and spans hook the release only when something records this acquire (observe decides):
    // otherwise the handle stays bare, as small as without them (heap per held and waiting lock).
    return watched
      ? this.events.observe(request, tryOnly, request.owner ?? currentLockContext()?.owner, this.reentrantLocks, hooks)
      : this.reentrantLocks.acquireHolder(request, tryOnly, hooks!); // (not watched: then a minimum hold)
  }
}

/** The request, its node naming `owner` when the caller named none. */
export function withOwner(request: LockRequest, owner: string | undefined): LockRequest {
  return owner === undefined || request.owner !== undefined ? request : { ...request, owner };
}

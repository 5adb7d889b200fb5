import { hostname } from 'node:os';
import { InvalidOptionsError, LockLostError, LockServiceClosedError } from '../errors.js';
import {
  type AcquireOptions,
  type LockPlacement,
  type LockRequest,
  type LockSlot,
  MAX_OWNER_BYTES,
  type RequestDefaults,
  validateLockContext,
  validateReleaseMode,
  validateWaitTimeout,
} from '../context/lock-request.js';
import { contextKey, currentLockContext, LockContext, lockContexts, type NewLockSource, ReentrantLocks, runOutsideLockContext } from '../context/lock-context.js';
import type { MinimumHolds } from '../context/minimum-holds.js';
import { HolderHandle, type ReleaseHooks } from '../context/holder-handle.js';
import type { ShutdownGate } from '../context/shutdown-gate.js';
import type { HolderSource, LockEvents } from '../events/lock-events.js';
import { eventModeOf } from '../events/lock-tracing.js';
import type { GrantedLock } from '../recipes/granted-lock.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import { type LockKindOptions, validateLockKind } from '../recipes/lock-kind.js';
import type { RecipeSet } from '../recipes/recipe-set.js';
import { DEFAULT_LAYOUT, type LockLayout, validateLayout } from '../queue/layouts.js';
import { checkMs } from '../shared/durations.js';
import { validateZkPath } from '../zookeeper/paths.js';
import type { ElectionRegistry } from './election-registry.js';

/**
 * How LockService turns a call into a handle, in three steps: the request resolved and checked once
 * (`check`: kind, placement, options, not an election's path, its key in a lock context; the name is
 * checked where its path is made, RecipeRuntime.pathOf); run
 * by its lock context policy; then taken (`take`) through the context (reentrancy, ReentrantLocks) or
 * from ZooKeeper (`newLock`: the recipe, the node's data, the shutdown gate), with the release hooks
 * it needs (events and spans, the minimum hold) on its one handle.
 */
export class LockAcquirer implements NewLockSource, HolderSource {
  /** This service's locks in the current request's or call's lock context. */
  readonly reentrantLocks: ReentrantLocks;
  private readonly hostData = { host: hostname(), pid: process.pid };
  private readonly anonymousData = Buffer.from(JSON.stringify(this.hostData));

  constructor(
    readonly defaults: RequestDefaults,
    /** Tells this service's locks apart from another LockService's in a shared lock context. */
    private readonly scope: string,
    private readonly recipes: RecipeSet,
    /** What shutdown does to the locks taken here; its `closing` refuses new ones once it began. */
    private readonly gate: ShutdownGate,
    private readonly events: LockEvents,
    private readonly holds: MinimumHolds,
    private readonly elections: ElectionRegistry,
  ) {
    this.reentrantLocks = new ReentrantLocks(scope, this, gate);
  }

  /**
   * A request checked once, its derived fields (slot, lockId, key) resolved here. Each check runs
   * only for an option given (a plain withLock passes none).
   */
  check(resource: string, kind: LockKindOptions & LockPlacement, options: AcquireOptions): LockRequest {
    const { mode, permits } = kind;
    if (mode !== undefined || permits !== undefined) validateLockKind(kind);
    const { owner } = options;
    if (owner !== undefined && (typeof owner !== 'string' || Buffer.byteLength(owner) > MAX_OWNER_BYTES)) {
      throw new InvalidOptionsError('owner', `must be a string of at most ${MAX_OWNER_BYTES} UTF-8 bytes (it is stored in the lock node)`);
    }
    const layout = (kind.layout !== undefined && validateLayout(kind.layout)) || this.defaults.layout;
    const zkPath = kind.zkPath === undefined ? undefined : validateZkPath(kind.zkPath);
    // The context slot: in our layout exclusive and write are one lock, so one slot.
    const slot: LockSlot =
      permits !== undefined ? 'semaphore' : mode === 'read' || mode === 'simple' ? mode : mode === 'write' || layout === DEFAULT_LAYOUT ? 'write' : 'exclusive';
    // Resolved once, here: the lock's id and its key in a lock context.
    const lockId = lockIdOf(resource, layout, zkPath);
    const request: LockRequest = {
      resource,
      layout,
      zkPath,
      lockId,
      slot,
      key: contextKey(this.scope, slot, lockId),
      kind: { mode, permits },
      waitTimeoutMs: options.waitTimeoutMs === undefined ? this.defaults.waitTimeoutMs : validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs'),
      signal: options.signal,
      owner,
      onReleaseRequest: options.onReleaseRequest === undefined ? undefined : validateReleaseMode(options.onReleaseRequest),
      holdAtLeastMs: options.holdAtLeastMs === undefined ? 0 : (checkMs(options.holdAtLeastMs, 'holdAtLeastMs') ?? 0),
    };
    // A lock on a path that is an election of this service is refused: looked up only while it takes part in one.
    if (this.elections.byPath.size !== 0) this.elections.assertNotElection(resource, zkPath);
    return request;
  }

  /** acquire and tryAcquire: by the request's lock context policy. Resolves null only for `tryOnly`. */
  acquire(resource: string, options: AcquireOptions, tryOnly: boolean): Promise<LockHandle | null> {
    try {
      const request = this.check(resource, options, options);
      if (options.lockContext === undefined || validateLockContext(options.lockContext) === 'join') return this.take(request, tryOnly);
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
      policy = options.lockContext === undefined ? 'join' : validateLockContext(options.lockContext);
      request = this.check(resource, options, options);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    // runByLockContextPolicy's rule, with no closure per call: 'join' runs in the current context,
    // else in a fresh one, which keeps the outer one's owner label.
    const outer = currentLockContext();
    if (policy === 'join' && outer) return holding(this, request, fn);
    return lockContexts.run(new LockContext(outer && (() => outer.owner)), holding<T>, this, request, fn);
  }

  /**
   * One checked request: the lock context answers, or a new lock from ZooKeeper; its handle gets the
   * release hooks it needs (events and spans when recorded, holdAtLeastMs when asked).
   */
  take(request: LockRequest, tryOnly: boolean): Promise<LockHandle | null> {
    const { holdAtLeastMs } = request;
    const hooks: ReleaseHooks | undefined = holdAtLeastMs > 0 ? { minimumHold: { ms: holdAtLeastMs, holds: this.holds } } : undefined;
    const { events } = this;
    // `watched` is decided when listeners come and go, and is always true while tracing is on
    // (@opentelemetry/api loaded): whether a span records is known only once it is started. Events and
    // spans hook the release only when something records this acquire: otherwise the handle stays
    // bare (heap per held and waiting lock).
    if (events.watched) {
      const { kind } = request;
      const target = { resource: request.resource, mode: eventModeOf(kind), permits: kind.permits, owner: request.owner ?? currentLockContext()?.owner };
      // Opened here, synchronously: the caller's async context is the spans' parent.
      const span = events.tracing?.startAcquire(target, request, tryOnly);
      if (span || events.observed) return events.observe(target, span, request, tryOnly, this, hooks);
    }
    const context = currentLockContext();
    if (context) return this.reentrantLocks.acquire(context, request, tryOnly, hooks);
    if (hooks) return this.holder(request, tryOnly, hooks);
    // Outside any context with nothing to hook: the granted lock itself, and no async call of ours kept while it waits.
    if (this.gate.closing) return Promise.reject(new LockServiceClosedError(request.resource));
    return this.newLock(request, tryOnly, request.owner, undefined);
  }

  /** One acquire as a HolderHandle, for a caller that hooks its release: in the current context, or alone outside any. */
  holder(request: LockRequest, tryOnly: boolean, hooks: ReleaseHooks): Promise<HolderHandle | null> {
    const context = currentLockContext();
    if (context) return this.reentrantLocks.acquire(context, request, tryOnly, hooks);
    if (this.gate.closing) return Promise.reject(new LockServiceClosedError(request.resource));
    return this.newLock(request, tryOnly, request.owner, undefined).then((lock) => lock && new HolderHandle(lock, hooks));
  }

  /**
   * A new lock from ZooKeeper for `request`, its node naming `owner`; with `under`, a read taken
   * under that held write of the same context (a downgrade: granted at once). Counted by the
   * shutdown gate from its grant (`adopt`) to its end (`forget`).
   *
   * Heap rule: the one callback made per call closes over `gate` and `resource` only (`adopt` is
   * this service's own), so that a waiting acquire keeps neither the request, its options nor the
   * node data alive (`npm run bench -- --only heap`, "waiting acquires"). Check: no callback here
   * names `request`, `options` or `data`.
   */
  newLock(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: GrantedLock | undefined): Promise<GrantedLock | null> {
    const { gate } = this;
    const { resource } = request;
    let taking: Promise<GrantedLock | null>;
    try {
      const data = owner === undefined ? this.anonymousData : Buffer.from(JSON.stringify({ ...this.hostData, owner }));
      if (under) {
        taking = this.downgrade(request, under, data);
      } else {
        const { onReleaseRequest, signal } = request;
        const { kind, layout } = request;
        // The default request's recipe is resolved once (RecipeSet.exclusive): no lookup per acquire.
        const plain = kind.mode === undefined && kind.permits === undefined && layout === DEFAULT_LAYOUT && onReleaseRequest === undefined;
        const recipe = plain ? this.recipes.exclusive : this.recipes.recipeFor(kind, layout, onReleaseRequest !== undefined);
        const options = {
          waitTimeoutMs: request.waitTimeoutMs,
          signal: gate.stopWaits ? gate.waitSignal(signal) : signal,
          data,
          zkPath: request.zkPath,
          onReleaseRequest,
          onEnd: this.forget,
        };
        taking = recipe.take(resource, options, tryOnly);
      }
    } catch (error) {
      taking = Promise.reject(error as Error); // bad options or a bad name: a rejection, as every failure of an acquire
    }
    return taking.then(this.adopt, (error: unknown) => {
      throw gate.explain(error, resource);
    });
  }

  /** A read under the context's own write; revocable as any other lock: a request written into the read's node reaches this holder. */
  private downgrade(request: LockRequest, under: GrantedLock, data: Buffer): Promise<GrantedLock> {
    const { onReleaseRequest } = request;
    const read = this.recipes.downgrade(under, { signal: request.signal, data, onEnd: this.forget });
    return onReleaseRequest ? read.then((lock) => (lock.watchForRelease(onReleaseRequest), lock)) : read;
  }

  /**
   * A lock just granted counts among those shutdown must take away (ShutdownGate.held), until its
   * `onEnd` (`forget`); one that ended already (its session lost on the way) is not counted.
   */
  private readonly adopt = (lock: GrantedLock | null): GrantedLock | null => {
    if (lock && !lock.hasEnded) {
      this.gate.held.add(lock);
      if (this.gate.closing) this.gate.grantedLate(lock);
    }
    return lock;
  };

  /** A lock's end (released, taken away or lost): it no longer counts. Given to the recipes as `onEnd`. */
  private readonly forget = (lock: GrantedLock): void => {
    const { gate } = this;
    gate.held.delete(lock);
    if (gate.held.size === 0) gate.allReleased?.();
  };
}

/** withLock's body, in the lock context it runs in: the lock held while `fn` runs, released after it. */
async function holding<T>(acquirer: LockAcquirer, request: LockRequest, fn: (lock: LockHandle) => T | Promise<T>): Promise<T> {
  const lock = (await acquirer.take(request, false))!; // never null when not tryOnly
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
 * The lock a request names, as a lock context tells locks apart: `r<resource>` for a resource in
 * our layout; else the layout, a NUL, and the zkPath (it starts with `/`) or `r<resource>`.
 */
export function lockIdOf(resource: string, layout: LockLayout, zkPath: string | undefined): string {
  if (layout === DEFAULT_LAYOUT && zkPath === undefined) return `r${resource}`;
  return `${layout}\u0000${zkPath ?? `r${resource}`}`;
}

/** The request, its node naming `owner` when the caller named none. */
export function withOwner(request: LockRequest, owner: string | undefined): LockRequest {
  return owner === undefined || request.owner !== undefined ? request : { ...request, owner };
}

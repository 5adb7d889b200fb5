/**
 * Reentrancy, in one module: the lock context of a request or call (who holds what, and how many
 * holders share it), the rules that let a context answer an acquire itself, the downgrade of a
 * context's own write to a read. Each holder's handle (its share of the context's lock) is a
 * HolderHandle (holder-handle.ts).
 *
 * Each incoming request, and each withLock or decorated call made outside any context (a cron job,
 * an event handler, a queue consumer, a script), runs in its own context. Inside one context a
 * resource already held is taken again at once and counted, and released when the outermost holder
 * lets go; two holders asking at once share one ZooKeeper node.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { IncompatibleLockError, LockServiceClosedError, LockTimeoutError, LockUpgradeError } from '../errors.js';
import type { GrantedLock } from '../recipes/granted-lock.js';
import { LEASE_POOLS } from '../recipes/lease-pool.js';
import { boundWait } from '../queue/stopper.js';
import type { LockRequest, LockSlot } from './lock-request.js';
import { type HeldEntry, HolderHandle, type ReleaseHooks } from './holder-handle.js';
import type { ShutdownGate } from './shutdown-gate.js';
import { DEFAULT_LAYOUT } from '../queue/layouts.js';

/** Who owns which lock: one request's or call's locks, and the acquires it has in flight. */
export class LockContext {
  /** `scope:slot:lockId` -> the lock this context holds and how many holders inside the context share it. */
  readonly held = new Map<string, HeldEntry>();
  /** Acquires in flight, so two holders in one context that ask at once share one ZooKeeper node. */
  readonly pending = new Map<string, { readonly lock: Promise<GrantedLock>; readonly permits?: number }>();

  private ownerLabel: string | undefined;

  constructor(
    /** Names who this context is (a request, a job); asked only when a lock node is created. */
    private readonly describeOwner?: () => string | undefined,
  ) {}

  /** Who this context is, stored in the lock nodes it creates. */
  get owner(): string | undefined {
    this.ownerLabel ??= this.describeOwner?.();
    return this.ownerLabel;
  }

  /** The lock held in `slot` on `lockId` (LockRequest.lockId) through the LockService `scope`, while it is still held. */
  live(scope: string, slot: LockSlot, lockId: string): HeldEntry | undefined {
    const entry = this.held.get(contextKey(scope, slot, lockId));
    return entry?.lock.isHeld() ? entry : undefined;
  }
}

/**
 * Keys a context's locks. `scope` names the LockService: two services (two clusters, or two root
 * paths) lock different things under the same resource name, so they never share a held lock.
 * (LockAcquirer.check calls it for LockRequest.key.)
 */
export function contextKey(scope: string, slot: LockSlot, lockId: string): string {
  return `${scope}:${slot}:${lockId}`;
}

/** Every slot, the write first (the lock `held` reports when a context holds a write and its downgraded read). */
const ALL_SLOTS: readonly LockSlot[] = ['write', 'exclusive', 'read', 'simple', 'semaphore'];

const storage = new AsyncLocalStorage<LockContext>();

/**
 * The lock contexts of requests and calls. Read through `currentLockContext`; LockAcquirer.withLock
 * runs in them directly (runByLockContextPolicy's rule), with no closure per call.
 */
export const lockContexts: Pick<AsyncLocalStorage<LockContext>, 'getStore' | 'run'> = storage;

/** The context of the current request or decorated call, if any (AsyncLocalStorage's own getStore, bound). */
export const currentLockContext: () => LockContext | undefined = storage.getStore.bind(storage);

/** Runs `fn` in a fresh context. */
export function runInNewLockContext<T>(fn: () => T, owner?: () => string | undefined): T {
  return storage.run(new LockContext(owner), fn);
}

/** Runs `fn` outside any context: what it acquires is its own, as in a script. */
export function runOutsideLockContext<T>(fn: () => T): T {
  return storage.exit(fn);
}

/**
 * Runs `fn` by a lock context policy: `'join'` in the current context (a fresh one when there is
 * none), `'new'` in a fresh one always. A fresh context inside another keeps the outer one's owner
 * label, unless `owner` names it.
 */
export function runByLockContextPolicy<T>(policy: 'join' | 'new', fn: () => T, owner?: () => string): T {
  const outer = storage.getStore();
  if (policy === 'join' && outer) return fn();
  return storage.run(new LockContext(owner ?? (outer && (() => outer.owner))), fn);
}

/** Where a lock the context cannot answer comes from: ZooKeeper, through the recipes (LockAcquirer.newLock). */
export interface NewLockSource {
  /** A new lock for `request`, its node naming `owner`; with `under`, a read taken under that held write (a downgrade). */
  newLock(request: LockRequest, tryOnly: boolean, owner: string | undefined, under: GrantedLock | undefined): Promise<GrantedLock | null>;
}

/**
 * The reentrancy rules of one LockService inside lock contexts: a request the context can answer
 * itself (it holds the lock, or is already waiting for it) never reaches ZooKeeper twice; a read asked
 * under the context's own write is a downgrade; a write asked under its own read is refused.
 * `scope` tells this service's locks apart from another LockService's in a shared context.
 */
export class ReentrantLocks {
  constructor(
    private readonly scope: string,
    private readonly source: NewLockSource,
    /** Refuses new locks (and joins of acquires in flight) once shutdown has begun. */
    private readonly gate: ShutdownGate,
  ) {}

  /**
   * The lock for `request` in `context`: the context answers when it can (each rule is looked at
   * only when the context holds or waits for something), else a new lock from ZooKeeper that
   * holders of the context asking meanwhile share.
   */
  async acquire(context: LockContext, request: LockRequest, tryOnly: boolean, hooks: ReleaseHooks | undefined): Promise<HolderHandle | null> {
    const { key, resource } = request;
    if (request.layout !== DEFAULT_LAYOUT) this.assertOneKind(context, request);
    // Synchronous unless there is something to wait for, so that an acquire registers itself as
    // pending before the caller can start the next one (Promise.all of a write and a read).
    const ownWrite = context.pending.size === 0 ? undefined : this.ownWriteFirst(context, request);
    if (ownWrite) await ownWrite;
    const joined = context.held.size === 0 ? undefined : this.joinHeld(context, request, hooks);
    if (joined) return joined;
    if (this.gate.closing) throw new LockServiceClosedError(resource);
    const shared = context.pending.get(key);
    const { permits } = request.kind;
    // A read under the context's own live write is a downgrade.
    const under = request.slot === 'read' ? context.live(this.scope, 'write', request.lockId)?.lock : undefined;
    if (tryOnly) {
      if (shared) return null; // this context is still waiting for it: not free right now
      const lock = await this.source.newLock(request, true, request.owner ?? context.owner, under);
      return lock && new HolderHandle(lock, hooks, context, key, permits);
    }
    if (shared) {
      // Two holders in one context asking at once share one queue entry (each within its own limits).
      if (shared.permits !== permits) {
        throw new IncompatibleLockError(resource, `this context is waiting for it as a semaphore of ${shared.permits} permits, not ${permits}`);
      }
      return new HolderHandle(sameReleaseMode(await waitShared(shared.lock, request), request), hooks, context, key, permits);
    }
    const acquiring = this.source.newLock(request, false, request.owner ?? context.owner, under) as Promise<GrantedLock>;
    context.pending.set(key, { lock: acquiring, permits });
    // This await is the acquire's first reaction: pending is cleared before a holder that shares it hears.
    try {
      return new HolderHandle(await acquiring, hooks, context, key, permits);
    } finally {
      if (context.pending.get(key)?.lock === acquiring) context.pending.delete(key);
    }
  }

  /**
   * The kinds of a Curator or kazoo lock on one path do not know each other (a kazoo read or write
   * waits for the context's own kazoo lock: a deadlock), and kazoo has no downgrade: a context holds
   * one kind of such a lock at a time, except Curator's read/write pair, which follows our rules
   * (a read under the context's own write is a downgrade; an upgrade is refused).
   * @throws IncompatibleLockError when the context holds or waits for another kind of it.
   */
  private assertOneKind(context: LockContext, request: LockRequest): void {
    const readWrite = request.layout === 'curator' && (request.slot === 'read' || request.slot === 'write');
    for (const slot of ALL_SLOTS) {
      if (slot === request.slot || (readWrite && (slot === 'read' || slot === 'write'))) continue;
      const key = contextKey(this.scope, slot, request.lockId);
      if (context.live(this.scope, slot, request.lockId) || context.pending.has(key)) {
        throw new IncompatibleLockError(
          request.resource,
          `this context already holds or waits for it as ${slot === 'semaphore' ? 'a semaphore' : `a ${slot} lock`}, and in the ` +
            `'${request.layout}' layout one context takes one kind of a lock at a time; release that one first`,
        );
      }
    }
  }

  /** The lock `context` holds on `lockId` (LockRequest.lockId) through this service, the write first. */
  held(context: LockContext | undefined, lockId: string): GrantedLock | undefined {
    for (const slot of ALL_SLOTS) {
      const entry = context?.live(this.scope, slot, lockId);
      if (entry) return entry.lock;
    }
    return undefined;
  }

  /**
   * A lock `context` holds through this service under the label `resource` (its `zkPath`, when
   * given), whatever its layout: how a method finds a lock its decorator took at a zkPath. The
   * write first, then the first taken.
   */
  heldByLabel(context: LockContext | undefined, resource: string, zkPath: string | undefined): GrantedLock | undefined {
    let found: GrantedLock | undefined;
    for (const [key, entry] of context?.held ?? []) {
      const { lock } = entry;
      if (!key.startsWith(`${this.scope}:`) || lock.resource !== resource || !lock.isHeld()) continue;
      if (zkPath !== undefined && !isNodeAt(lock.path, zkPath)) continue;
      if (key.startsWith(`${this.scope}:write:`)) return lock;
      found ??= lock;
    }
    return found;
  }

  /**
   * A read asked while the same context is still waiting for the write waits for that write first
   * (then it is a downgrade, granted at once); a write asked while the context waits for the read
   * could never be granted.
   */
  private ownWriteFirst(context: LockContext, request: LockRequest): Promise<unknown> | undefined {
    if (request.slot === 'read') {
      const write = context.pending.get(contextKey(this.scope, 'write', request.lockId));
      // The write's own failure is its caller's to report; this read then queues as any read would.
      return write && waitShared(write.lock.catch(() => undefined), request);
    }
    if (request.slot === 'write' && context.pending.has(contextKey(this.scope, 'read', request.lockId))) {
      throw new LockUpgradeError(request.resource);
    }
    return undefined;
  }

  /** The context's own lock that answers this request at once, or undefined to ask ZooKeeper. */
  private joinHeld(context: LockContext, request: LockRequest, hooks: ReleaseHooks | undefined): HolderHandle | undefined {
    const { resource, slot, lockId } = request;
    const entry = context.live(this.scope, slot, lockId);
    if (entry) {
      if (slot === 'semaphore' && entry.permits !== request.kind.permits) {
        throw new IncompatibleLockError(resource, `this context holds it as a semaphore of ${entry.permits} permits, not ${request.kind.permits}`);
      }
      return new HolderHandle(sameReleaseMode(entry.lock, request), hooks, context, request.key, entry.permits);
    }
    if (slot === 'write' && context.live(this.scope, 'read', lockId)) throw new LockUpgradeError(resource);
    return undefined;
  }
}

/**
 * A joined holder shares the context's lock, and so the way it hears release requests, which was
 * set when the lock was taken: one that asks for another way is refused rather than left unheard.
 * @throws IncompatibleLockError
 */
function sameReleaseMode(lock: GrantedLock, request: LockRequest): GrantedLock {
  const asked = request.onReleaseRequest;
  if (asked === undefined || lock.releaseMode === asked) return lock;
  const held = lock.releaseMode === undefined ? 'without onReleaseRequest' : `with onReleaseRequest: '${lock.releaseMode}'`;
  throw new IncompatibleLockError(
    request.resource,
    `this context holds it ${held}, and a holder that joins it shares that lock; give onReleaseRequest: '${asked}' to the ` +
      'first acquire of the context (the decorator or the outer withLock), or leave it out here',
  );
}

/**
 * Waits for an acquire another holder of the same context started, within this caller's own timeout
 * and signal. With `waitTimeoutMs: 0` it does not wait: that acquire is still waiting, so the lock is
 * not free now (as tryAcquire answers null).
 */
function waitShared<T>(lock: Promise<T>, request: LockRequest): Promise<T> {
  if (request.waitTimeoutMs === 0) return Promise.reject(new LockTimeoutError(request.resource, 0));
  return boundWait(lock, request.waitTimeoutMs, request.signal, request.resource);
}

/**
 * Whether a holder's node is one of the lock at `zkPath`: a child of it, or a lease of Curator's
 * semaphore there, which keeps its leases in `<zkPath>/leases`.
 */
function isNodeAt(node: string, zkPath: string): boolean {
  const parent = node.slice(0, node.lastIndexOf('/'));
  return parent === zkPath || parent === LEASE_POOLS.curator.leasesPath(zkPath);
}

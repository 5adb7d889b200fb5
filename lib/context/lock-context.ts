import { AsyncLocalStorage } from 'node:async_hooks';
import type { HeldLock } from '../recipes/held-lock.js';

/** Which of a context's locks on one resource: write and exclusive are one slot (they are one lock). */
export type LockSlot = 'write' | 'read' | 'simple' | 'semaphore';

/** One lock a context holds, shared by its holders inside the context. */
export interface HeldEntry {
  readonly lock: HeldLock;
  holders: number;
  /** A semaphore's permits. */
  readonly permits?: number;
}

/**
 * Who owns which lock. Each incoming request, and each withLock or decorated call made outside any
 * context (a cron job, an event handler, a queue consumer, a script), runs in its own context; inside one context a resource already held is
 * taken again at once and counted, and released when the outermost holder lets go.
 */
export class LockContext {
  /** `scope:slot:resource` -> the lock this context holds and how many holders inside the context share it. */
  readonly held = new Map<string, HeldEntry>();
  /** Acquires in flight, so two holders in one context that ask at once share one ZooKeeper node. */
  readonly pending = new Map<string, { readonly lock: Promise<HeldLock>; readonly permits?: number }>();

  private ownerLabel: string | undefined;

  constructor(
    /** Names who this context is (a request, a job); asked only when a lock node is created. */
    private readonly describeOwner?: () => string,
  ) {}

  /** Who this context is, stored in the lock nodes it creates. */
  get owner(): string | undefined {
    this.ownerLabel ??= this.describeOwner?.();
    return this.ownerLabel;
  }

  /** The lock held in `slot` on `resource` through the LockService `scope`, while it is still held. */
  live(scope: string, slot: LockSlot, resource: string): HeldEntry | undefined {
    const entry = this.held.get(contextKey(scope, slot, resource));
    return entry?.lock.isHeld() ? entry : undefined;
  }
}

/**
 * Keys a context's locks. `scope` names the LockService: two services (two clusters, or two root
 * paths) lock different things under the same resource name, so they never share a held lock.
 */
export function contextKey(scope: string, slot: LockSlot, resource: string): string {
  return `${scope}:${slot}:${resource}`;
}

const storage = new AsyncLocalStorage<LockContext>();

/** The context of the current request or decorated call, if any. */
export function currentLockContext(): LockContext | undefined {
  return storage.getStore();
}

/** Runs `fn` in a fresh context. */
export function runInNewLockContext<T>(fn: () => T, owner?: () => string): T {
  return storage.run(new LockContext(owner), fn);
}

/** Runs `fn` in the current context, or in a fresh one when there is none. */
export function runInLockContext<T>(fn: () => T, owner?: () => string): T {
  return storage.getStore() ? fn() : storage.run(new LockContext(owner), fn);
}

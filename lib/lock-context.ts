import { AsyncLocalStorage } from 'node:async_hooks';
import type { HeldLock } from './recipes/held-lock.js';

/**
 * Who owns which lock. Each incoming request, and each decorated call made outside any request
 * (a cron job, a script), runs in its own context; inside one context a resource already held is
 * taken again at once and counted, and released when the outermost holder lets go.
 */
export class LockContext {
  /** Resource -> the lock this context holds and how many holders inside the context share it. */
  readonly held = new Map<string, { lock: HeldLock; holders: number }>();
  /** Acquires in flight, so two holders in one context that ask at once share one ZooKeeper node. */
  readonly pending = new Map<string, Promise<HeldLock>>();
}

const storage = new AsyncLocalStorage<LockContext>();

/** The context of the current request or decorated call, if any. */
export function currentLockContext(): LockContext | undefined {
  return storage.getStore();
}

/** Runs `fn` in a fresh context. */
export function runInNewLockContext<T>(fn: () => T): T {
  return storage.run(new LockContext(), fn);
}

/** Runs `fn` in the current context, or in a fresh one when there is none. */
export function runInLockContext<T>(fn: () => T): T {
  return storage.getStore() ? fn() : storage.run(new LockContext(), fn);
}

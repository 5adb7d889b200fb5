/**
 * The term a `@Leader` call runs under, for `heldLock(group)` inside it: the call's own term, also
 * after it ended (its `assertHeld` then throws LeadershipLostError) or after a new term began
 * (whose token is not this call's).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { HeldLock } from '../recipes/lock-handle.js';

interface LeadershipScope {
  readonly group: string;
  readonly term: HeldLock;
  readonly outer: LeadershipScope | undefined;
}

const storage = new AsyncLocalStorage<LeadershipScope>();

/** Runs `fn` as the leader of `group` in `term`. */
export function runAsLeader<T>(group: string, term: HeldLock, fn: () => T): T {
  return storage.run({ group, term, outer: storage.getStore() }, fn);
}

/** The term of `group` the current call runs under, if it is a `@Leader` call (or inside one). */
export function leadershipInScope(group: string): HeldLock | undefined {
  for (let scope = storage.getStore(); scope; scope = scope.outer) if (scope.group === group) return scope.term;
  return undefined;
}

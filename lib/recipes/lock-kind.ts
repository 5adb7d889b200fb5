import { InvalidOptionsError, shown } from '../errors.js';

/**
 * How a lock is shared:
 * - `exclusive` (default): the fair exclusive lock; one holder, first come, first served.
 * - `read` / `write`: the shared read/write lock. Readers overlap; a writer is alone; a queued writer
 *   is never overtaken by later readers. A write also excludes `exclusive` holders of the same name
 *   (they are the same lock to each other).
 * - `simple`: one EPHEMERAL node that every contender tries to create. Exclusive, but unfair and a
 *   release wakes every waiter: for rarely contended names only. Cannot share a name with the others.
 */
export type LockMode = 'exclusive' | 'read' | 'write' | 'simple';

/** The kind of lock: a mode, or a semaphore's permits. */
export interface LockKindOptions {
  /**
   * Which lock: `'exclusive'` (the fair lock), `'read'` / `'write'` (the shared read/write lock, where
   * a write excludes everything and reads share), or `'simple'` (one node, unfair, no queue).
   * @default 'exclusive'
   */
  mode?: LockMode;
  /**
   * Makes it a semaphore: up to `permits` holders at once, first come, first served. Every user of
   * the resource must give the same number. Cannot be combined with a mode other than `exclusive`.
   * @default undefined (a lock, not a semaphore)
   */
  permits?: number;
}

const MODES = new Set(['exclusive', 'read', 'write', 'simple']);

/** Largest permit count: it is written into node names. */
export const MAX_PERMITS = 1_000_000;

/** Checks a mode / permits pair from a caller. */
export function validateLockKind(kind: LockKindOptions, where = ''): void {
  if (kind.mode !== undefined && !MODES.has(kind.mode)) {
    throw new InvalidOptionsError(`${where}mode`, `must be 'exclusive', 'read', 'write' or 'simple', got ${shown(kind.mode)}`);
  }
  if (kind.permits !== undefined) {
    validatePermits(kind.permits);
    if (kind.mode !== undefined && kind.mode !== 'exclusive') {
      throw new InvalidOptionsError(`${where}permits`, `makes a semaphore, which has no mode; drop mode '${kind.mode}'`);
    }
  }
}

/** Checks a semaphore's permit count. */
export function validatePermits(permits: unknown): number {
  if (typeof permits !== 'number' || !Number.isInteger(permits) || permits < 1 || permits > MAX_PERMITS) {
    throw new InvalidOptionsError('permits', `must be a whole number from 1 to ${MAX_PERMITS}, got ${shown(permits)}`);
  }
  return permits;
}

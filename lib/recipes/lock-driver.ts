import type { QueueEntry } from './queue-entry.js';

/** Whether the entry at `mine` holds the lock now, or which single entry it must wait behind. */
export type Decision = { granted: true } | { granted: false; watch: QueueEntry };

/**
 * What distinguishes one lock type from another (Curator calls it the lock internals driver): the
 * queue mechanics are shared; a driver only says "may I hold it, and whom do I watch".
 * Watching exactly one entry is what keeps a release from waking the herd.
 */
export interface LockDriver {
  /** The node-name kind letter of this lock type's entries. */
  readonly kind: string;
  decide(queue: readonly QueueEntry[], mine: number): Decision;
}

/** The fair exclusive lock: the lowest entry holds; every other entry watches the one just before it. */
export const exclusiveDriver: LockDriver = {
  kind: 'x',
  decide(queue, mine) {
    return mine === 0 ? { granted: true } : { granted: false, watch: queue[mine - 1]! };
  },
};

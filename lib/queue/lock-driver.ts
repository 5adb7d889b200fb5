import { QueueConflictError } from '../zookeeper/zk-errors.js';
import { ENTRY_KIND, type EntryKind, nodePrefix, type QueueEntry, sortQueue } from './queue-entry.js';
import { type LockLayout, OWN_PARENTS, type ParentModes } from './layouts.js';

/**
 * Whether the entry at `mine` holds now, or which entries it must wait behind (it re-reads the queue
 * when any of them changes). Watching one entry, or only entries that must all go before it may
 * proceed, is what keeps a release from waking the herd.
 */
export type Decision =
  | { granted: true; /** Poke the entry after ours: it may be waiting on us (semaphores). */ wakeNext?: boolean }
  | {
      granted: false;
      watch: readonly QueueEntry[];
      /**
       * The watched entry may be poked (its data written) when it stops waiting; if it already was
       * by the time the watch is set, the queue moved on since it was read: read it again.
       */
      pokable?: boolean;
      /**
       * The watched entry is an exclusive or write entry whose release, as the holder, grants us the
       * lock: nothing it conflicts with was below it, and nothing can be between us. Such a holder
       * writes its node in the transaction that deletes it (`QueueGrant.grantByWrite`), so that write
       * alone tells us we hold, without listing the queue again; a deletion (a waiter giving up, a session ending)
       * still means listing it.
       */
      grantedByWrite?: boolean;
    };

/**
 * What distinguishes one lock type from another (Curator calls it the lock internals driver): the
 * queue mechanics are shared; a driver only says "may I hold it, and whom do I watch".
 */
export interface LockDriver {
  /** Whose clients' nodes these are (layouts.ts). */
  readonly layout: LockLayout;
  /** The kind of this lock type's entries. */
  readonly kind: EntryKind;
  /** A semaphore's permit count, written into the node name. */
  readonly permits?: number;
  /** Holders release by writing their node in the delete's transaction (`QueueGrant.grantByWrite`). */
  readonly grantsByWrite: boolean;
  /** How the queue's parent and its missing ancestors are created. */
  readonly parents: ParentModes;
  /** The name prefix of one attempt's node in a session: ZooKeeper appends the sequence. */
  prefix(sessionId: string): string;
  /**
   * `'EPHEMERAL'`: the prefix is the whole name, ending in a sequence of its own (Curator's
   * downgrade read, which takes its write's sequence).
   * @default 'EPHEMERAL_SEQUENTIAL'
   */
  readonly createMode?: 'EPHEMERAL';
  /**
   * The entries among a parent's children that this lock type queues with, in queue order.
   * @throws QueueConflictError when the children hold nodes of another layout.
   */
  order(children: readonly string[]): QueueEntry[];
  /** @throws QueueConflictError when the queue holds entries this lock type cannot share a queue with. */
  decide(queue: readonly QueueEntry[], mine: number): Decision;
}

/** Our queue, strict: another layout's nodes on the path are refused. */
function ownQueue(children: readonly string[]): QueueEntry[] {
  return sortQueue(children, true);
}

/** The parts every driver of our own layout shares: names of queue-entry.ts, grants by write for writers. */
function ownDriver(kind: EntryKind, decide: LockDriver['decide'], permits?: number): LockDriver {
  return {
    layout: 'nestjs-zk-lock',
    kind,
    permits,
    grantsByWrite: GRANTING_KINDS.has(kind),
    parents: OWN_PARENTS,
    // Bound, not a closure: the name is made in one call of queue-entry.ts.
    prefix: nodePrefix.bind(undefined, permits === undefined ? kind : `${kind}${permits}`),
    order: ownQueue,
    decide,
  };
}

/** Entries that exclude everyone (exclusive and write, revocable or not). */
export const WRITE_KINDS: ReadonlySet<string> = new Set<string>([ENTRY_KIND.exclusive, ENTRY_KIND.write, ENTRY_KIND.revocableExclusive, ENTRY_KIND.revocableWrite]);
const LOCK_KINDS = new Set<string>([...WRITE_KINDS, ENTRY_KIND.read, ENTRY_KIND.downgradeRead]);
/** The entries whose holders grant the lock by write: a data change of such a node is its release to the watcher. */
const GRANTING_KINDS = new Set<string>([ENTRY_KIND.exclusive, ENTRY_KIND.write]);

/**
 * Only entries below ours are checked: a newer entry of another kind is the newcomer's mistake (it
 * fails on its own listing and leaves), and must not cost a correct waiter its place.
 */
function assertLockQueue(queue: readonly QueueEntry[], mine: number): void {
  for (const entry of queue.slice(0, mine)) {
    if (entry.kind === ENTRY_KIND.election) throw inUseAsElection(entry);
    if (!LOCK_KINDS.has(entry.kind)) {
      throw new QueueConflictError(`it is in use as a semaphore (node ${entry.name}); a resource is either a lock or a semaphore`);
    }
  }
}

function inUseAsElection(entry: QueueEntry): QueueConflictError {
  return new QueueConflictError(
    `it is in use as a leader election (node ${entry.name}); a name is either an election or a lock`,
    'Use another name for the lock, or take part in the election (LockService.elect, @Leader).',
  );
}

/**
 * The lowest entry holds; every other entry watches the one just before it. A downgrade read keeps
 * its write's place against later writers, so a writer at the head still waits for it to go.
 */
function decideWrite(queue: readonly QueueEntry[], mine: number): Decision {
  assertLockQueue(queue, mine);
  if (mine > 0) {
    const before = queue[mine - 1]!;
    return { granted: false, watch: [before], grantedByWrite: GRANTING_KINDS.has(before.kind) };
  }
  const downgraded = queue.findLast((entry, i) => i !== mine && entry.kind === ENTRY_KIND.downgradeRead);
  return downgraded ? { granted: false, watch: [downgraded] } : { granted: true };
}

/** The fair exclusive lock (the default). */
export const exclusiveDriver: LockDriver = ownDriver(ENTRY_KIND.exclusive, decideWrite);

/** The write half of the read/write lock: exclusive, and excludes readers too. */
export const writeDriver: LockDriver = ownDriver(ENTRY_KIND.write, decideWrite);

/** The revocable exclusive lock: as the exclusive, but its node may be written with a release request. */
export const revocableExclusiveDriver: LockDriver = ownDriver(ENTRY_KIND.revocableExclusive, decideWrite);

/** The revocable write lock. */
export const revocableWriteDriver: LockDriver = ownDriver(ENTRY_KIND.revocableWrite, decideWrite);

/**
 * A read holds when no write is below it, and watches only the last write below it: when that
 * write goes, every reader it held back may proceed, and no one else wakes.
 */
export const readDriver: LockDriver = ownDriver(ENTRY_KIND.read, (queue, mine) => {
  assertLockQueue(queue, mine);
  for (let i = mine - 1; i >= 0; i -= 1) {
    const entry = queue[i]!;
    if (WRITE_KINDS.has(entry.kind)) return { granted: false, watch: [entry], grantedByWrite: GRANTING_KINDS.has(entry.kind) };
  }
  return { granted: true };
});

/**
 * A read taken by the holder of the write lock, in the write's own session: granted at once (the
 * holder excludes everyone else). Writers treat it as still holding the write's place.
 */
export const downgradeReadDriver: LockDriver = ownDriver(ENTRY_KIND.downgradeRead, (queue, mine) => {
  assertLockQueue(queue, mine);
  return { granted: true };
});

/**
 * Up to `permits` holders, first come, first served. The first waiter watches every holder (any
 * release lets it in); each later waiter watches only the waiter before it. A waiter that becomes a
 * holder pokes the entry after it (a write to its own node), which is how the next waiter learns it
 * is now first in line; nobody else wakes.
 */
export function semaphoreDriver(permits: number): LockDriver {
  return ownDriver(
    ENTRY_KIND.semaphore,
    (queue, mine) => {
      for (const entry of queue.slice(0, mine)) {
        if (entry.kind === ENTRY_KIND.election) throw inUseAsElection(entry);
        if (entry.kind !== ENTRY_KIND.semaphore) {
          throw new QueueConflictError(`it is in use as a lock (node ${entry.name}); a resource is either a lock or a semaphore`);
        }
        if (entry.permits !== permits) {
          throw new QueueConflictError(
            `this semaphore asks for ${permits} permits but a holder or waiter (node ${entry.name}) uses ${entry.permits}; ` +
              'every user of one semaphore must give the same permits',
          );
        }
      }
      // Any entry after ours may have listed the queue while we still waited, and be watching us.
      if (mine < permits) return { granted: true, wakeNext: mine + 1 < queue.length };
      if (mine === permits) return { granted: false, watch: queue.slice(0, permits) };
      return { granted: false, watch: [queue[mine - 1]!], pokable: true };
    },
    permits,
  );
}

/**
 * A participant of a leader election: the head leads, every other participant watches the one just
 * before it (a change wakes one participant). Its nodes are never written: no grant by write, no
 * poke (a write would use up Curator's one-shot watch on a latch node without a new listing).
 */
export const electionDriver: LockDriver = ownDriver(ENTRY_KIND.election, (queue, mine) => {
  for (const entry of queue.slice(0, mine)) {
    if (entry.kind !== ENTRY_KIND.election) {
      throw new QueueConflictError(
        `it is in use as a ${entry.kind === ENTRY_KIND.semaphore ? 'semaphore' : 'lock'} (node ${entry.name}); a name is either an election or a lock`,
        'Use another group name for the election.',
      );
    }
  }
  return headHolds(queue, mine);
});

/** The lowest entry holds; every other one watches the entry just before it (elections, Curator's and kazoo's locks). */
export function headHolds(queue: readonly QueueEntry[], mine: number): Decision {
  return mine === 0 ? { granted: true } : { granted: false, watch: [queue[mine - 1]!] };
}

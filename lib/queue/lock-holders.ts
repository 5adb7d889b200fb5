/**
 * Who holds a lock now and who waits, read from its path's children by the rules of the layout
 * whose nodes they are (layouts.ts). One set of rules for everything that asks: the views
 * (`inspect`, `inspectAll`) and release requests, which write into the holders' nodes.
 *
 * - Ours: each entry holds when its own lock type's driver grants it (lock-driver.ts); a
 *   downgraded write still at the head holds together with its read.
 * - Curator's `InterProcessMutex` and `LeaderLatch`: the first node in Curator's order. Its
 *   `InterProcessReadWriteLock`: the first node when it is a write, else every read before the
 *   first write; a downgrade read and its write (same sequence) hold together.
 * - kazoo: the reads before the first `__lock__` node, or that node when it is first. Right after
 *   readers it may hold: a `Lock` does not see readers and holds there, a `WriteLock` waits, and
 *   the two name their nodes alike (`mayHold`).
 */
import { InvalidOptionsError } from '../errors.js';
import { QueueConflictError } from '../zookeeper/zk-errors.js';
import { curatorLatchDriver, curatorMutexDriver, curatorReadDriver, kazooWriteDriver } from './foreign-drivers.js';
import { downgradeReadDriver, electionDriver, exclusiveDriver, type LockDriver, readDriver, semaphoreDriver, WRITE_KINDS, writeDriver } from './lock-driver.js';
import { type LockLayout, styleOf } from './layouts.js';
import { ENTRY_KIND, type QueueEntry, SEQUENCE_DIGITS, sortQueue } from './queue-entry.js';

/** A lock's queue in its layout's order, and which of its entries hold now. */
export interface LockHolders {
  /** Every entry the layout's clients queue with, in their order. */
  readonly queue: readonly QueueEntry[];
  /** The entries that hold, in queue order. */
  readonly holders: readonly QueueEntry[];
  /**
   * Entries whose names cannot tell whether they hold (kazoo's `__lock__` node right after readers:
   * a `Lock` holds there, a `WriteLock` waits). The views show them waiting; release requests ask
   * them too.
   */
  readonly mayHold: readonly QueueEntry[];
}

/**
 * Reads a lock's children by `layout`'s rules. In our layout, `strict: false` skips other
 * layouts' nodes (they are not in our queue); the Curator and kazoo layouts always refuse them.
 * @throws QueueConflictError when the children hold nodes of another layout.
 */
export function lockHolders(children: readonly string[], layout: LockLayout, strict = true): LockHolders {
  if (layout === 'nestjs-zk-lock') return ownHolders(sortQueue(children, strict));
  if (layout === 'kazoo') return kazooHolders(kazooWriteDriver.order(children));
  if (children.some((name) => styleOf(name) === 'curator-latch')) return curatorHolders(curatorLatchDriver.order(children), false);
  const readWrite = children.some((name) => name.includes(CURATOR_READ) || name.includes(CURATOR_WRITE));
  return curatorHolders(readWrite ? curatorReadDriver.order(children) : curatorMutexDriver.order(children), readWrite);
}

/**
 * {@link lockHolders} for the lock at `path`, whose layout a caller named.
 * @throws InvalidOptionsError (option `layout`) when the path holds another layout's nodes.
 */
export function lockHoldersAt(path: string, children: readonly string[], layout: LockLayout): LockHolders {
  try {
    return lockHolders(children, layout);
  } catch (error) {
    if (!(error instanceof QueueConflictError)) throw error;
    throw new InvalidOptionsError('layout', `'${layout}' does not match the lock at ${path}: ${error.detail}; name it with the layout of its nodes (the CLI's --layout)`);
  }
}

/** The entries of `holders.queue` that do not hold, in queue order. */
export function waitersOf({ queue, holders }: LockHolders): QueueEntry[] {
  return queue.filter((entry) => !holders.includes(entry));
}

const CURATOR_READ = '__READ__';
const CURATOR_WRITE = '__WRIT__';

function ownHolders(queue: readonly QueueEntry[]): LockHolders {
  const holders = queue.filter((entry, i) => holdsNow(queue, i, entry));
  // A downgraded write still at the head holds with its read (same session, below the read).
  for (const read of holders.filter((entry) => entry.kind === ENTRY_KIND.downgradeRead)) {
    const write = queue.find((entry) => entry.sessionId === read.sessionId && entry.sequence < read.sequence && WRITE_KINDS.has(entry.kind));
    if (write && !holders.includes(write)) holders.push(write);
  }
  return { queue, holders: queue.filter((entry) => holders.includes(entry)), mayHold: [] };
}

/** Whether the entry at `index` of our own queue holds, by its own lock type's rules. */
function holdsNow(queue: readonly QueueEntry[], index: number, entry: QueueEntry): boolean {
  try {
    return ownDriverOf(entry).decide(queue, index).granted;
  } catch {
    return false; // entries of another lock type are below it: this one cannot hold
  }
}

function ownDriverOf(entry: QueueEntry): LockDriver {
  switch (entry.kind) {
    case ENTRY_KIND.read:
      return readDriver;
    case ENTRY_KIND.write:
      return writeDriver;
    case ENTRY_KIND.downgradeRead:
      return downgradeReadDriver;
    case ENTRY_KIND.semaphore:
      return semaphoreDriver(entry.permits ?? 1);
    case ENTRY_KIND.election:
      return electionDriver;
    default:
      return exclusiveDriver;
  }
}

function curatorHolders(queue: readonly QueueEntry[], readWrite: boolean): LockHolders {
  if (!readWrite) return { queue, holders: queue.slice(0, 1), mayHold: [] };
  const firstWrite = queue.findIndex((entry) => entry.kind === ENTRY_KIND.write);
  const first =
    firstWrite === 0 ? [queue[0]!] : queue.slice(0, firstWrite < 0 ? queue.length : firstWrite).filter((entry) => entry.kind === ENTRY_KIND.read);
  // A downgrade read carries its write's sequence: the two hold together, whichever sorts first.
  const sequences = new Set(first.map((entry) => entry.name.slice(-SEQUENCE_DIGITS)));
  const holders = queue.filter(
    (entry) => first.includes(entry) || (entry.kind !== ENTRY_KIND.exclusive && sequences.has(entry.name.slice(-SEQUENCE_DIGITS))),
  );
  return { queue, holders, mayHold: [] };
}

function kazooHolders(queue: readonly QueueEntry[]): LockHolders {
  const firstLock = queue.findIndex((entry) => entry.kind === ENTRY_KIND.write);
  if (firstLock < 0) return { queue, holders: [...queue], mayHold: [] };
  if (firstLock === 0) return { queue, holders: queue.slice(0, 1), mayHold: [] };
  return { queue, holders: queue.slice(0, firstLock), mayHold: [queue[firstLock]!] };
}

/**
 * Drivers for the nodes of Apache Curator's and kazoo's lock recipes (layouts.ts), so that a lock
 * taken here excludes a Java or Python service's on the same path. Each driver names its node as
 * that client does, sorts and filters the children by its rules, and holds exactly when that client
 * would; whom it watches only decides when it looks again.
 *
 * They never grant by write nor poke: the other clients read node data only for Curator's
 * revocation request, and a write would mean nothing to them.
 *
 * Sources: Curator 5.x `locks/` (`LockInternals`, `StandardLockInternalsDriver`,
 * `InterProcessReadWriteLock`, `ProtectedUtils`), kazoo 2.9+ `kazoo/recipe/lock.py`.
 */
import { randomUUID } from 'node:crypto';
import { type Decision, headHolds, type LockDriver } from './lock-driver.js';
import { ENTRY_KIND, type EntryKind, type QueueEntry, refuseForeign, SEQUENCE_DIGITS } from './queue-entry.js';
import { CURATOR_PARENTS, KAZOO_PARENTS, type NodeStyle } from './layouts.js';

/** Curator's sort key: the text after the last `lockName`, or the whole name (`fixForSorting`). */
export function curatorSortKey(name: string, lockName: string): string {
  const at = name.lastIndexOf(lockName);
  return at >= 0 ? name.slice(at + lockName.length) : name;
}

/** Java's `String.compareTo` (UTF-16 code units), then the whole name so that equal keys sort alike everywhere. */
function byKey(a: { key: string; name: string }, b: { key: string; name: string }): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function entry(name: string, kind: string): QueueEntry {
  return { name, kind, permits: undefined, sessionId: '', sequence: Number(name.slice(-SEQUENCE_DIGITS)) };
}

/** A read holds while no write is below it, and watches the last write below it (which holds before it can go). */
function noWriteBelow(queue: readonly QueueEntry[], mine: number): Decision {
  for (let i = mine - 1; i >= 0; i -= 1) {
    if (queue[i]!.kind === ENTRY_KIND.write) return { granted: false, watch: [queue[i]!] };
  }
  return { granted: true };
}

function foreignDriver(
  layout: 'curator' | 'kazoo',
  kind: EntryKind,
  prefix: (sessionId: string) => string,
  order: (children: readonly string[]) => QueueEntry[],
  decide: LockDriver['decide'],
): LockDriver {
  return { layout, kind, grantsByWrite: false, parents: layout === 'curator' ? CURATOR_PARENTS : KAZOO_PARENTS, prefix, order, decide };
}

/**
 * Curator's children in its order: every child is a contender (strangers too, sorted by their whole
 * name, as Curator does); nodes of another known style are refused.
 */
function curatorQueue(children: readonly string[], own: NodeStyle, key: (name: string) => string, kindOf: (name: string) => string): QueueEntry[] {
  const keyed: { key: string; name: string }[] = [];
  for (const name of children) {
    refuseForeign(name, own);
    keyed.push({ key: key(name), name });
  }
  return keyed.sort(byKey).map(({ name }) => entry(name, kindOf(name)));
}

/**
 * Curator's `InterProcessMutex`: `_c_<uuid>-lock-<seq>` (protected EPHEMERAL_SEQUENTIAL), sorted by
 * the sequence after the last `lock-`; index 0 holds.
 */
export const curatorMutexDriver: LockDriver = foreignDriver(
  'curator',
  ENTRY_KIND.exclusive,
  () => `_c_${randomUUID()}-lock-`,
  (children) => curatorQueue(children, 'curator-mutex', (name) => curatorSortKey(name, 'lock-'), () => ENTRY_KIND.exclusive),
  headHolds,
);

/**
 * Curator's `LeaderLatch`: `_c_<uuid>-latch-<seq>` (protected EPHEMERAL_SEQUENTIAL, the participant
 * id as data), sorted by the text after the last `latch-`; index 0 leads. Every child counts, as in
 * Curator; a mutex's or read/write lock's nodes are refused. kazoo's `Election` is its `Lock`
 * (kazooLockDriver).
 */
export const curatorLatchDriver: LockDriver = foreignDriver(
  'curator',
  ENTRY_KIND.election,
  () => `_c_${randomUUID()}-latch-`,
  (children) => curatorQueue(children, 'curator-latch', (name) => curatorSortKey(name, 'latch-'), () => ENTRY_KIND.election),
  headHolds,
);

const READ = '__READ__';
const WRITE = '__WRIT__';

/** `InterProcessReadWriteLock`'s order: both names' sequences sorted together. */
function curatorReadWriteQueue(children: readonly string[]): QueueEntry[] {
  return curatorQueue(
    children,
    'curator-read-write',
    (name) => curatorSortKey(curatorSortKey(name, READ), WRITE),
    (name) => (name.includes(WRITE) ? ENTRY_KIND.write : name.includes(READ) ? ENTRY_KIND.read : ENTRY_KIND.exclusive),
  );
}

/** Curator's write lock: `_c_<uuid>-__WRIT__<seq>`; holds when first of all children. */
export const curatorWriteDriver: LockDriver = foreignDriver('curator', ENTRY_KIND.write, () => `_c_${randomUUID()}-${WRITE}`, curatorReadWriteQueue, headHolds);

/** Curator's read lock: `_c_<uuid>-__READ__<seq>`; holds when no write is below it (other names do not count). */
export const curatorReadDriver: LockDriver = foreignDriver('curator', ENTRY_KIND.read, () => `_c_${randomUUID()}-${READ}`, curatorReadWriteQueue, noWriteBelow);

/**
 * A read taken by the holder of a Curator write (a downgrade), as Curator 5.5+ makes it:
 * `_c_<uuid>-__READ__<the write's sequence>`, EPHEMERAL, so that it sorts at the write's place and
 * keeps later writers out after the write is released. Granted at once (the holder excludes everyone).
 */
export function curatorDowngradeDriver(writeSequence: string): LockDriver {
  return {
    ...foreignDriver('curator', ENTRY_KIND.downgradeRead, () => `_c_${randomUUID()}-${READ}${writeSequence}`, curatorReadWriteQueue, () => ({ granted: true })),
    createMode: 'EPHEMERAL',
  };
}

/** The write sequence of a Curator write lock's node name, or undefined for another name. */
export function curatorWriteSequence(name: string): string | undefined {
  return /__WRIT__(\d{10})$/.exec(name)?.[1];
}

const KAZOO_LOCK = '__lock__';
const KAZOO_READ = '__rlock__';
const KAZOO_SEQUENCE = /(__r?lock__)(-?\d{10})$/;

/**
 * kazoo's contenders in order: names ending in `__lock__` or `__rlock__` and a sequence, by that
 * sequence (kazoo ignores other names); `readers` keeps `__rlock__` nodes, which a plain `Lock` does
 * not see. Nodes of Curator's or our layout are refused.
 */
function kazooQueue(children: readonly string[], readers: boolean): QueueEntry[] {
  const keyed: { key: string; name: string; kind: string }[] = [];
  for (const name of children) {
    const match = KAZOO_SEQUENCE.exec(name);
    if (!match) {
      refuseForeign(name, 'kazoo');
      continue;
    }
    const read = match[1] === KAZOO_READ;
    if (read && !readers) continue;
    keyed.push({ key: match[2]!, name, kind: read ? ENTRY_KIND.read : ENTRY_KIND.write });
  }
  return keyed.sort(byKey).map(({ name, kind }) => entry(name, kind));
}

const kazooPrefix = (nodeName: string) => (): string => `${randomUUID().replaceAll('-', '')}${nodeName}`;

/** kazoo's `Lock`: `<hex>__lock__<seq>`; holds when first among `__lock__` nodes (readers are not seen). */
export const kazooLockDriver: LockDriver = foreignDriver('kazoo', ENTRY_KIND.exclusive, kazooPrefix(KAZOO_LOCK), (children) => kazooQueue(children, false), headHolds);

/** kazoo's `WriteLock`: `<hex>__lock__<seq>`; holds when first among writers and readers. */
export const kazooWriteDriver: LockDriver = foreignDriver('kazoo', ENTRY_KIND.write, kazooPrefix(KAZOO_LOCK), (children) => kazooQueue(children, true), headHolds);

/** kazoo's `ReadLock`: `<hex>__rlock__<seq>`; holds when no `__lock__` node is below it. */
export const kazooReadDriver: LockDriver = foreignDriver('kazoo', ENTRY_KIND.read, kazooPrefix(KAZOO_READ), (children) => kazooQueue(children, true), noWriteBelow);

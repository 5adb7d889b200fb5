/**
 * Names of lock nodes: `<kind>[<permits>]-<session id>-<acquire nonce>-<sequence>`, for example
 * `x-100000511d50000-3-0000000042` or `s5-100000511d50000-4-0000000043`. The session id and nonce make
 * a node recognisable by the acquire that created it, so a create whose reply was lost can be found
 * and adopted, and never confused with a node of an older session. ZooKeeper appends the 10-digit
 * sequence. A semaphore's entries carry their permit count, so holders that disagree about it are
 * caught from the listing alone.
 */

import { QueueConflictError } from '../zookeeper/zk-errors.js';
import { type NodeStyle, OWN_NAME, styleAdvice, styleOf } from './layouts.js';

/**
 * The kinds of queue entries. Exclusive and write entries behave alike (a write lock is an exclusive
 * lock that readers queue behind); a downgrade read is a read taken by the holder of a write lock,
 * which keeps the write's place in the queue against later writers. The capital letters are the
 * revocable exclusive and write entries: their holders listen for a release request written into
 * their node, so they never grant the lock by write (QueueGrant.grantByWrite).
 */
export const ENTRY_KIND = {
  exclusive: 'x',
  write: 'w',
  revocableExclusive: 'X',
  revocableWrite: 'W',
  read: 'r',
  downgradeRead: 'd',
  semaphore: 's',
  /** A participant of a leader election: the head leads (recipes/candidacy.ts). Never written. */
  election: 'e',
} as const;
export type EntryKind = (typeof ENTRY_KIND)[keyof typeof ENTRY_KIND];

export interface QueueEntry {
  readonly name: string;
  readonly kind: string;
  /** A semaphore entry's permit count; undefined for locks. */
  readonly permits: number | undefined;
  readonly sessionId: string;
  readonly sequence: number;
}

let nonce = 0;

/** The name prefix for one acquire attempt in one session; `kind` carries a semaphore's permits (`s5`). */
export function nodePrefix(kind: EntryKind | `${EntryKind}${number}`, sessionId: string): string {
  nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
  return `${kind}-${sessionId}-${nonce.toString(36)}-`;
}

/** The digits ZooKeeper appends to a sequential node's name. */
export const SEQUENCE_DIGITS = 10;

/** Parses a child name; names that are not lock nodes (someone else's files) give undefined. */
export function parseEntry(name: string): QueueEntry | undefined {
  const match = OWN_NAME.exec(name);
  if (!match) return undefined;
  return {
    name,
    kind: match[1]!,
    permits: match[2] ? Number(match[2]) : undefined,
    sessionId: match[3]!,
    sequence: Number(match[5]),
  };
}

/**
 * The lock nodes among a parent's children, in queue order (by sequence). Other names are someone
 * else's files and are skipped, except lock nodes of another layout (`strict`): they would not wait
 * for ours, nor ours for them.
 * @throws QueueConflictError with `strict`, for a lock node of another layout.
 */
export function sortQueue(children: readonly string[], strict = false): QueueEntry[] {
  const entries: QueueEntry[] = [];
  for (const name of children) {
    const entry = parseEntry(name);
    if (entry) entries.push(entry);
    else if (strict) refuseForeign(name, 'nestjs-zk-lock');
  }
  return entries.sort((a, b) => a.sequence - b.sequence);
}

/**
 * Throws when `name` is a lock node of a style other than `own`.
 * @throws QueueConflictError naming the clients that made it and what shares a path with them.
 */
export function refuseForeign(name: string, own: NodeStyle): void {
  const style = styleOf(name);
  if (style === undefined || style === own) return;
  const sameLayout = style.startsWith('curator') && own.startsWith('curator');
  const election = style === 'curator-latch' || own === 'curator-latch';
  throw new QueueConflictError(
    `its path holds ${styleAdvice(style)} nodes (${name}), which do not exclude this ${own === 'curator-latch' ? "election's" : "lock's"}`,
    election
      ? 'A path is either a LeaderLatch election or a lock: use another path for one of them.'
      : sameLayout
        ? "Curator's mutex (mode 'exclusive') and its read/write lock (modes 'read', 'write') do not see each other's nodes: use one of them on a path."
        : 'Give every client of the path the same layout (or use another path).',
  );
}

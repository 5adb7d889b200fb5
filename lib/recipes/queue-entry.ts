/**
 * Names of lock nodes: `<kind>-<session id>-<acquire nonce>-<sequence>`, for example
 * `x-100000511d50000-3-0000000042`. The session id and nonce make a node recognisable by the acquire
 * that created it, so a create whose reply was lost can be found and adopted, and never confused
 * with a node of an older session. ZooKeeper appends the 10-digit sequence.
 */

export interface QueueEntry {
  readonly name: string;
  /** One letter: `x` exclusive (later recipes add their own). */
  readonly kind: string;
  readonly sessionId: string;
  readonly sequence: number;
}

let nonce = 0;

/** The name prefix for one acquire attempt in one session. */
export function nodePrefix(kind: string, sessionId: string): string {
  nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
  return `${kind}-${sessionId}-${nonce.toString(36)}-`;
}

const NODE_NAME = /^([a-z])-([0-9a-f]+)-([0-9a-z]+)-(\d{10})$/;

/** Parses a child name; names that are not lock nodes (someone else's files) give undefined. */
export function parseEntry(name: string): QueueEntry | undefined {
  const match = NODE_NAME.exec(name);
  if (!match) return undefined;
  return { name, kind: match[1]!, sessionId: match[2]!, sequence: Number(match[4]) };
}

/** The lock nodes among a parent's children, in queue order (by sequence). */
export function sortQueue(children: readonly string[]): QueueEntry[] {
  const entries: QueueEntry[] = [];
  for (const name of children) {
    const entry = parseEntry(name);
    if (entry) entries.push(entry);
  }
  return entries.sort((a, b) => a.sequence - b.sequence);
}

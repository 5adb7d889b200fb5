/**
 * A participant's node data: what its id becomes in the node, and back. Ours store the lock's
 * description with the id as its owner (the views show host and pid); Curator's LeaderLatch and
 * kazoo's Election store the id itself.
 */
import { hostname } from 'node:os';
import { InvalidOptionsError } from '../errors.js';
import { DEFAULT_LAYOUT, type LockLayout } from '../queue/layouts.js';
import { parseData } from './lock-inspection.js';
import { MAX_NODE_DATA_BYTES } from './recipe-runtime.js';

/** Our nodes store the lock's description (`{ host, pid, owner }`, the id as owner); Curator's and kazoo's the id itself. */
export function nodeData(id: string, layout: LockLayout): Buffer {
  const data = Buffer.from(layout === DEFAULT_LAYOUT ? JSON.stringify({ host: hostname(), pid: process.pid, owner: id }) : id);
  if (data.length > MAX_NODE_DATA_BYTES) {
    // What the node holds besides the id: in our layout, the host and pid around it (the id as a JSON string, quotes aside).
    const besides = layout === DEFAULT_LAYOUT ? data.length - (Buffer.byteLength(JSON.stringify(id)) - 2) : 0;
    throw new InvalidOptionsError(
      'id',
      `makes its node ${data.length} bytes, and at most ${MAX_NODE_DATA_BYTES} fit (every participant reads it): use an id of at most ${MAX_NODE_DATA_BYTES - besides} bytes here`,
    );
  }
  return data;
}

/** A participant's id from its node: our `owner`, or the whole text (Curator, kazoo). */
export function idOfData(data: Buffer): string {
  const parsed = parseData(data.toString());
  return typeof parsed === 'string' ? parsed : String(parsed.owner ?? '');
}

/** Checks a participant id: a non-empty string. */
export function validateId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidOptionsError('id', `must be a non-empty string (it names this participant to the others), got ${JSON.stringify(id) ?? String(id)}`);
  }
  return id;
}

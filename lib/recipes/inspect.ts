import { ENTRY_KIND, type QueueEntry } from '../queue/queue-entry.js';
import { DEFAULT_LAYOUT, detectLayout, leasePoolOf, type LockLayout, validateLayout } from '../queue/layouts.js';
import { lockHolders, lockHoldersAt, waitersOf } from '../queue/lock-holders.js';
import type { NodeData } from '../zookeeper/zk-session-api.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import { inspectLeasePool } from './inspect-pool.js';
import type { RecipeRuntime } from './recipe-runtime.js';
import { type LockInspection, type LockNodeInfo, type LockNodeMode, nodeInfo } from './lock-inspection.js';

/** Options of LockService.inspect. */
export interface InspectOptions {
  /**
   * Aborting it stops the reads: the call rejects with the abort reason.
   * @default undefined (the reads run to the end)
   */
  signal?: AbortSignal;
  /**
   * The lock's exact ZooKeeper path (a Curator or kazoo service's), instead of
   * `<rootPath>/<encoded resource>`; the resource is then only its label. Outside rootPath.
   * @default undefined (`<rootPath>/<encoded resource>`)
   */
  zkPath?: string;
  /**
   * Whose rules tell the holders from the waiters: this library's own, Apache Curator's or kazoo's
   * (the rules `requestRelease` uses). The path's nodes must be in that layout.
   * @default undefined (this library's own, unless only Curator's or only kazoo's nodes are there)
   */
  layout?: LockLayout;
}

const MODES: Record<string, LockNodeMode> = {
  [ENTRY_KIND.exclusive]: 'exclusive',
  [ENTRY_KIND.write]: 'write',
  [ENTRY_KIND.revocableExclusive]: 'exclusive',
  [ENTRY_KIND.revocableWrite]: 'write',
  [ENTRY_KIND.read]: 'read',
  [ENTRY_KIND.downgradeRead]: 'downgraded-read',
  [ENTRY_KIND.semaphore]: 'semaphore',
  [ENTRY_KIND.election]: 'election',
};

/**
 * Reads a lock's nodes and tells holders from waiters with the rules of its layout
 * (queue/lock-holders.ts). A snapshot: a few reads, not one atomic view, so a node may come or go
 * between them.
 * @throws InvalidOptionsError for a bad zkPath or layout, or a path whose nodes are in another layout.
 */
export async function inspectLock(runtime: RecipeRuntime, resource: string, options: InspectOptions = {}): Promise<LockInspection> {
  const given = validateLayout(options.layout);
  const path = runtime.pathFor(resource, options.zkPath);
  const { signal } = options;
  const session = await runtime.sessions.session(signal);
  const nobody = (layout: LockLayout): LockInspection => ({ resource, path, layout, recipe: 'none', holders: [], waiters: [] });
  if (given === undefined || given === DEFAULT_LAYOUT) {
    const own = await readNode(session, path, signal);
    if (!own) return nobody(given ?? DEFAULT_LAYOUT);
    if (own.stat.ephemeralOwner !== '0') return simpleLock(nobody(DEFAULT_LAYOUT), own);
  }
  const { children } = await readChildren(session, path, signal);
  const layout = given ?? layoutOf(children);
  const none = nobody(layout);
  if (layout !== DEFAULT_LAYOUT && leasePoolOf(children)) return inspectLeasePool(session, none, children, signal);
  // Not named, ours skips nodes of other layouts, as our own queue does; a layout the caller named
  // (ours too) refuses them, so that a wrong one is never read as a free lock.
  const rolesOf = (names: readonly string[]) => (given === undefined ? lockHolders(names, layout, false) : lockHoldersAt(path, names, layout));
  const listed = rolesOf(children);
  const nodes = await Promise.all(listed.queue.map((entry) => readNode(session, `${path}/${entry.name}`, signal)));
  const read = new Map(listed.queue.flatMap((entry, i) => (nodes[i] ? [[entry.name, nodes[i]] as const] : [])));
  // Roles of the nodes still there: one that went between the listing and its read no longer counts.
  const roles = rolesOf([...read.keys()]);
  const modeOf = layout === DEFAULT_LAYOUT ? (kind: string) => MODES[kind] ?? 'exclusive' : foreignModes(roles.queue);
  const info = (entry: QueueEntry): LockNodeInfo => nodeInfo(entry.name, modeOf(entry.kind), read.get(entry.name)!, entry.sequence, entry.permits);
  if (roles.queue.length === 0) return none;
  return { ...none, recipe: 'queue', holders: roles.holders.map(info), waiters: waitersOf(roles).map(info) };
}

/** Not given: ours, unless only Curator's or only kazoo's nodes are there (a module whose `layout` is theirs). */
function layoutOf(children: readonly string[]): LockLayout {
  const detected = detectLayout(children);
  return detected && !detected.mixed ? detected.layout : DEFAULT_LAYOUT;
}

/** Our simple lock: the lock's own node, ephemeral; its data after the first line is the holder's. */
function simpleLock(none: LockInspection, own: NodeData): LockInspection {
  const text = own.data.toString();
  const data = Buffer.from(text.slice(text.indexOf('\n') + 1));
  const holder = nodeInfo(none.path.slice(none.path.lastIndexOf('/') + 1), 'simple', { ...own, data });
  return { ...none, recipe: 'simple', holders: [holder] };
}

/**
 * Curator's and kazoo's entries: reads, writes, and exclusive for the rest. kazoo's `Lock` and
 * `WriteLock` name their nodes alike, so a `__lock__` node is a write only beside readers.
 */
function foreignModes(queue: readonly QueueEntry[]): (kind: string) => LockNodeMode {
  const readers = queue.some((entry) => entry.kind === ENTRY_KIND.read);
  return (kind) =>
    kind === ENTRY_KIND.election ? 'election' : kind === ENTRY_KIND.read ? 'read' : kind === ENTRY_KIND.write && readers ? 'write' : 'exclusive';
}

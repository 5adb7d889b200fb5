import { downgradeReadDriver, exclusiveDriver, type LockDriver, readDriver, semaphoreDriver, writeDriver } from '../queue/lock-driver.js';
import { ENTRY_KIND, type QueueEntry, sortQueue } from '../queue/queue-entry.js';
import type { RecipeRuntime } from './recipe-runtime.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';

/** How a lock node holds or waits. */
export type LockNodeMode = 'exclusive' | 'read' | 'write' | 'downgraded-read' | 'semaphore' | 'simple';

/** One lock node, as read from ZooKeeper. */
export interface LockNodeInfo {
  /** The node's name under the resource's path (the simple lock: the resource's own node name). */
  readonly node: string;
  readonly mode: LockNodeMode;
  /** The ZooKeeper session that owns the node, hex. */
  readonly sessionId: string;
  /** Place in the queue (queue-based recipes). */
  readonly sequence?: number;
  /** The semaphore's permit count. */
  readonly permits?: number;
  /** When the node was created (ZooKeeper server's clock). */
  readonly createdAt?: Date;
  /** What the holder stored about itself: `{ host, pid, owner }` from LockService, or the raw text. */
  readonly data: Record<string, unknown> | string;
}

/** Who holds a resource and who waits for it, in queue order. */
export interface LockInspection {
  readonly resource: string;
  /** The resource's znode. */
  readonly path: string;
  /** `none`: nobody holds or waits. */
  readonly recipe: 'none' | 'queue' | 'simple';
  readonly holders: LockNodeInfo[];
  readonly waiters: LockNodeInfo[];
  /**
   * Callers of this process waiting in its cohort queue (behind its own node, or for it), which
   * ZooKeeper does not see. Set by LockService and RecipeSet.
   */
  readonly localWaiters?: number;
}

const MODES: Record<string, LockNodeMode> = {
  [ENTRY_KIND.exclusive]: 'exclusive',
  [ENTRY_KIND.write]: 'write',
  [ENTRY_KIND.revocableExclusive]: 'exclusive',
  [ENTRY_KIND.revocableWrite]: 'write',
  [ENTRY_KIND.read]: 'read',
  [ENTRY_KIND.downgradeRead]: 'downgraded-read',
  [ENTRY_KIND.semaphore]: 'semaphore',
};

function driverOf(entry: QueueEntry): LockDriver {
  switch (entry.kind) {
    case ENTRY_KIND.read:
      return readDriver;
    case ENTRY_KIND.write:
      return writeDriver;
    case ENTRY_KIND.downgradeRead:
      return downgradeReadDriver;
    case ENTRY_KIND.semaphore:
      return semaphoreDriver(entry.permits ?? 1);
    default:
      return exclusiveDriver;
  }
}

/**
 * Reads a resource's lock nodes and tells holders from waiters with the same rules the recipes use.
 * A snapshot: a few reads, not one atomic view, so a node may come or go between them.
 */
export async function inspectLock(runtime: RecipeRuntime, resource: string, signal?: AbortSignal): Promise<LockInspection> {
  const path = runtime.pathOf(resource);
  const session = await runtime.sessions.session(signal);
  const own = await readNode(session, path, signal);
  if (!own) return { resource, path, recipe: 'none', holders: [], waiters: [] };
  if (own.stat.ephemeralOwner !== '0') {
    const text = own.data.toString();
    const holder: LockNodeInfo = {
      node: path.slice(path.lastIndexOf('/') + 1),
      mode: 'simple',
      sessionId: own.stat.ephemeralOwner,
      createdAt: own.stat.ctime,
      data: parseData(text.slice(text.indexOf('\n') + 1)),
    };
    return { resource, path, recipe: 'simple', holders: [holder], waiters: [] };
  }
  const queue = sortQueue((await readChildren(session, path, signal)).children);
  const nodes = await Promise.all(queue.map((entry) => readNode(session, `${path}/${entry.name}`, signal)));
  const present = queue.filter((_, i) => nodes[i] !== null);
  const holders: LockNodeInfo[] = [];
  const waiters: LockNodeInfo[] = [];
  present.forEach((entry, i) => {
    const node = nodes[queue.indexOf(entry)]!;
    const info: LockNodeInfo = {
      node: entry.name,
      mode: MODES[entry.kind] ?? 'exclusive',
      sessionId: entry.sessionId,
      sequence: entry.sequence,
      ...(entry.permits === undefined ? {} : { permits: entry.permits }),
      createdAt: node.stat.ctime,
      data: parseData(node.data.toString()),
    };
    (holds(present, i, entry) ? holders : waiters).push(info);
  });
  return { resource, path, recipe: present.length > 0 ? 'queue' : 'none', holders, waiters };
}

/** Whether the entry at `index` of our own queue holds, by its own lock type's rules. */
export function holds(queue: readonly QueueEntry[], index: number, entry: QueueEntry): boolean {
  try {
    return driverOf(entry).decide(queue, index).granted;
  } catch {
    return false; // entries of another lock type are in the queue: this one cannot hold
  }
}

function parseData(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON: someone else's format, shown as it is
  }
  return text;
}

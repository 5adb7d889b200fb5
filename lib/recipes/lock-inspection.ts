/** What the views read of a lock: its holders and waiters, and what each node says of its holder. */
import type { LockLayout } from '../queue/layouts.js';
import type { NodeData } from '../zookeeper/zk-session-api.js';

/** How a lock node holds or waits; `'election'`: a participant of a leader election (its holder leads). */
export type LockNodeMode = 'exclusive' | 'read' | 'write' | 'downgraded-read' | 'semaphore' | 'simple' | 'election';

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
  /**
   * What the holder stored about itself: `{ host, pid, owner }` from LockService, or the raw text
   * (a Curator node's participant id, by default its client's IP; a kazoo node's identifier).
   */
  readonly data: Record<string, unknown> | string;
}

/** Who holds a resource and who waits for it, in queue order. */
export interface LockInspection {
  readonly resource: string;
  /** The resource's znode. */
  readonly path: string;
  /** Whose rules its nodes were read by. */
  readonly layout: LockLayout;
  /** `none`: nobody holds or waits; `pool`: a Curator or kazoo semaphore's lease pool. */
  readonly recipe: 'none' | 'queue' | 'simple' | 'pool';
  readonly holders: LockNodeInfo[];
  readonly waiters: LockNodeInfo[];
  /**
   * Callers of this process waiting in its cohort queue (behind its own node, or for it), which
   * ZooKeeper does not see. Set by LockService and RecipeSet.
   */
  readonly localWaiters?: number;
}


/** One node as the views show it; `sessionId` is the node's owner. */
export function nodeInfo(name: string, mode: LockNodeMode, node: NodeData, sequence?: number, permits?: number): LockNodeInfo {
  return {
    node: name,
    mode,
    sessionId: node.stat.ephemeralOwner,
    ...(sequence === undefined ? {} : { sequence }),
    ...(permits === undefined ? {} : { permits }),
    createdAt: node.stat.ctime,
    data: parseData(node.data.toString()),
  };
}

/** A node's data: a JSON object as such; anything else (someone else's format) as its text. */
export function parseData(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // not JSON: someone else's format, shown as it is
  }
  return text;
}

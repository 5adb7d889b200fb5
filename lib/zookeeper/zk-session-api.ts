import type { CREATE_FLAGS, ZkStat } from './native-client.js';
import type { ZkAcl } from './zk-acl.js';
import type { HistorySeen } from './zxid-watermark.js';

/**
 * The narrow interface of one ZooKeeper session that the recipes and the queue use, and that both
 * the native session (ZkSession) and the testing kit's in-memory one implement.
 */

/** How a node is created (ZooKeeper's create modes, see CREATE_FLAGS). */
export type CreateMode = keyof typeof CREATE_FLAGS;

/** What a node watch tells of the node as it was when the watch was set. */
export type WatchedStat = Pick<ZkStat, 'version'>;

/**
 * Why a node watch fired: its data was written, it was deleted (or was gone when the watch was
 * set), or the connection dropped, which leaves it unknown.
 */
export type NodeChange = 'changed' | 'deleted' | 'unknown';

/** A waiter's handle on a node watch (ZkSessionApi.watchNode). */
export interface NodeWatch {
  /**
   * The node's data version when the watch was set, or null when it did not exist (and no watch was
   * left). Waiters of one path share it.
   */
  readonly armed: Promise<WatchedStat | null>;
  cancel(): void;
}

/** A node's data and Stat, as read. */
export interface NodeData {
  data: Buffer;
  stat: ZkStat;
}

/** A node's children, as read. */
export interface ChildList {
  children: string[];
  /** The parent's Stat as of this read: `pzxid` is the zxid of its last child created or deleted. */
  stat: ZkStat;
}

/**
 * One operation of a transaction (ZkSessionApi.multi): write a node's data (any version), delete a
 * node (any version), require a node to be at `version` (-1: to exist), or create a node (not a
 * sequential one: its name would only be known from the answer).
 */
export type MultiOp =
  | { readonly op: 'setData'; readonly path: string; readonly data: Buffer }
  | { readonly op: 'delete'; readonly path: string }
  | { readonly op: 'check'; readonly path: string; readonly version: number }
  | { readonly op: 'create'; readonly path: string; readonly data: Buffer; readonly mode: 'PERSISTENT' | 'EPHEMERAL'; readonly acl?: readonly ZkAcl[] };

/** A session's lease, as its holders use it (SessionLease implements it). */
export interface Lease {
  /**
   * The `performance.now()` time until which the server cannot have expired the session;
   * -Infinity before its first answer.
   */
  readonly validUntil: number;
  /** validUntil, for a clock reading the caller already has (`performance.now()`). */
  untilAt(now: number): number;
  /** How long one answer keeps the lease, in ms: the granted session timeout less the lease margin. */
  readonly lengthMs: number;
  /**
   * Marks the session in use by a holder until a matching `release()`: the lease renews itself
   * meanwhile, and the session ends when it runs out.
   */
  retain(): void;
  release(): void;
  /**
   * Whether the lease runs now; when it has run out, the session is ended first (as the lease's
   * own timer would: a grant found after the lease ran out cannot be trusted).
   */
  checkNow(): boolean;
}

/**
 * One ZooKeeper session, as the recipes see it: a narrow promise interface over one native handle.
 * When the session ends, `lost` aborts and every pending or later operation rejects with
 * ZkSessionLostError. A new session is a new object (see SessionHandles.open).
 */
export interface ZkSessionApi {
  /** The server-assigned session id, hex. Unique per session, so it can mark a session's nodes. */
  readonly id: string;
  /** Aborted, with a ZkSessionLostError as reason, when this session has ended. */
  readonly lost: AbortSignal;
  /**
   * Calls `listener` once when the session ends (at once if it has); returns the function that
   * removes it. Cheaper than a listener on `lost`, for the many waiters and holders of a session.
   */
  onLost(listener: () => void): () => void;
  readonly connected: boolean;
  /** The session's lease: until when its locks are safe (see SessionLease). */
  readonly lease: Lease;
  /**
   * What this session's connection has seen of ZooKeeper's history, across its sessions (see
   * ZxidWatermark); nothing where it is not tracked.
   */
  readonly watermark: HistorySeen;
  /** Resolves once connected; rejects with ZkSessionLostError if the session ends first. */
  whenConnected(signal?: AbortSignal): Promise<void>;
  /** Creates a node with `acl` (ZooKeeper's open ACL without one), in the create request itself. */
  create(path: string, data: Buffer | string, mode: CreateMode, acl?: readonly ZkAcl[]): Promise<string>;
  getChildren(path: string): Promise<ChildList>;
  /** Reads a node without watching it. Rejects with ZkNoNodeError when it does not exist. */
  getData(path: string): Promise<NodeData>;
  /** A node's ACL. */
  getAcl(path: string): Promise<ZkAcl[]>;
  /** Replaces a node's ACL (any version). */
  setAcl(path: string, acl: readonly ZkAcl[]): Promise<void>;
  /** Overwrites a node's data (any version). Setting it fires the watches on the node. */
  setData(path: string, data: Buffer): Promise<void>;
  /**
   * Reads a node and leaves a one-shot watch on it. `armed` resolves null, leaving no watch, when
   * the node does not exist. `onChange` runs at most once, on the node's next change or deletion,
   * unless `cancel` was called first, and is told which. Watchers of one path share one ZooKeeper
   * watch.
   */
  watchNode(path: string, onChange: (change: NodeChange) => void): NodeWatch;
  delete(path: string): Promise<void>;
  /**
   * Applies `ops` as one transaction, one request on the wire: all of them, in order, or none. A
   * refusal rejects with the error of the first operation that failed (ZkNoNodeError, ...); its
   * `path` names the operations' paths. A write in it fires the node's data watches as a setData
   * does (and a delete after it in the same transaction finds that one-shot watch already gone).
   */
  multi(ops: readonly MultiOp[]): Promise<void>;
}

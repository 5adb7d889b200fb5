import { ageOf, type LockOverview } from '../recipes/inspect-all.js';
import type { LockInspection, LockNodeInfo, LockNodeMode } from '../recipes/lock-inspection.js';
import type { LockLayout } from '../queue/layouts.js';

/**
 * The live view's JSON (GET /<path>/data, and `nestjs-zk-lock inspect --json`): the overview
 * flattened for display, with every node's age computed on the reader's side.
 */
export interface LockViewData {
  readonly rootPath: string;
  /** When ZooKeeper was read (ISO 8601, the reading process's clock). */
  readonly readAt: string;
  /** Whether the reading connection uses TLS (the `tls` option); absent when the reader does not say. */
  readonly tls?: boolean;
  /** The member the reading session is connected to (`address:port`), null while disconnected; absent when the reader does not say. */
  readonly server?: string | null;
  /** The members the reading connection uses now (`host:port`); absent when the reader does not say. */
  readonly members?: readonly string[];
  /** Under rootPath by resource, then those at other paths (Curator's, kazoo's) by path. */
  readonly locks: LockViewEntry[];
  /** Named or scanned paths whose nodes do not follow one layout, and why; absent when none. */
  readonly unreadable?: { readonly path: string; readonly reason: string }[];
}

export interface LockViewEntry {
  readonly resource: string;
  /** The resource's znode. */
  readonly path: string;
  /** Whose rules its nodes follow: `nestjs-zk-lock`, `curator` or `kazoo`. */
  readonly layout: LockLayout;
  /**
   * `exclusive`, `read/write`, `semaphore`, `simple` or `election`, from the modes of its nodes. An
   * election's holder is its leader, its waiters the followers in line.
   */
  readonly kind: string;
  /** The semaphore's permit count, for a semaphore. */
  readonly permits?: number;
  readonly holders: LockViewNode[];
  /** In queue order: the first is next. */
  readonly waiters: LockViewNode[];
  /**
   * Callers of the process that serves this view waiting in its cohort queue, behind its own node
   * (ZooKeeper does not see them; other processes' local waiters are not known here).
   */
  readonly localWaiters?: number;
}

export interface LockViewNode {
  readonly node: string;
  readonly mode: LockNodeMode;
  /** The owning ZooKeeper session, hex. */
  readonly sessionId: string;
  readonly sequence?: number;
  /** When the node was created (ISO 8601, ZooKeeper's clock). */
  readonly createdAt?: string;
  /**
   * ms since the node was created, as of `readAt`: for a waiter, how long it has waited; for a
   * holder, how long since it queued (its wait plus its hold so far). Reader's clock minus
   * ZooKeeper's, so clock skew between them shifts it; never negative.
   */
  readonly ageMs?: number;
  /** From the node's data as LockService writes it (`{ host, pid, owner }`). */
  readonly owner?: string;
  readonly host?: string;
  readonly pid?: number;
  /** The node's data as text, when it is not LockService's JSON. */
  readonly data?: string;
  /**
   * What a Curator or kazoo node names, its data as text: Curator's participant id (by default the
   * client's IP), kazoo's identifier.
   */
  readonly participant?: string;
}

export function toViewData(overview: LockOverview): LockViewData {
  return {
    rootPath: overview.rootPath,
    readAt: overview.readAt.toISOString(),
    locks: overview.locks.map((lock) => toEntry(lock, overview.readAt)),
    ...(overview.unreadable ? { unreadable: overview.unreadable } : {}),
  };
}

function toEntry(lock: LockInspection, readAt: Date): LockViewEntry {
  const nodes = [...lock.holders, ...lock.waiters];
  const permits = nodes.find((node) => node.permits !== undefined)?.permits;
  return {
    resource: lock.resource,
    path: lock.path,
    layout: lock.layout,
    kind: kindOf(nodes),
    ...(permits === undefined ? {} : { permits }),
    holders: lock.holders.map((node) => toNode(node, readAt, lock.layout)),
    waiters: lock.waiters.map((node) => toNode(node, readAt, lock.layout)),
    ...(lock.localWaiters ? { localWaiters: lock.localWaiters } : {}),
  };
}

function kindOf(nodes: readonly LockNodeInfo[]): string {
  const modes = new Set(nodes.map((node) => node.mode));
  if (modes.has('simple')) return 'simple';
  if (modes.has('election')) return 'election';
  if (modes.has('semaphore')) return 'semaphore';
  if (modes.has('read') || modes.has('write') || modes.has('downgraded-read')) return 'read/write';
  return 'exclusive';
}

function toNode(info: LockNodeInfo, readAt: Date, layout: LockLayout): LockViewNode {
  const age = ageOf(info.createdAt, readAt);
  const about = describedBy(info.data, layout !== 'nestjs-zk-lock');
  return {
    node: info.node,
    mode: info.mode,
    sessionId: info.sessionId,
    ...(info.sequence === undefined ? {} : { sequence: info.sequence }),
    ...(info.createdAt ? { createdAt: info.createdAt.toISOString() } : {}),
    ...(age === undefined ? {} : { ageMs: age }),
    ...about,
  };
}

/**
 * Only the fields LockService writes, each only with the type it writes (in any layout); anything
 * else is the node's data as text: a Curator or kazoo node's participant (shown when there is one).
 */
function describedBy(data: LockNodeInfo['data'], foreign: boolean): Pick<LockViewNode, 'owner' | 'host' | 'pid' | 'data' | 'participant'> {
  const out: { owner?: string; host?: string; pid?: number } = {};
  if (typeof data !== 'string') {
    if (typeof data.owner === 'string') out.owner = data.owner;
    if (typeof data.host === 'string') out.host = data.host;
    if (typeof data.pid === 'number') out.pid = data.pid;
    if (Object.keys(out).length > 0) return out;
  }
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  if (!foreign) return { data: text };
  return text === '' ? {} : { participant: text };
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`: the same format the page uses. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '?';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.floor(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor(whole / 60) % 60).padStart(2, '0')} min`;
}

/**
 * A node's role as the views show it: `holder` and `waiter #<n>` (1 is next); in an election,
 * `leader` and `follower #<n>`. The page's script has the same rule.
 */
export function roleLabel(entry: LockViewEntry, holder: boolean, position: number): string {
  const election = entry.kind === 'election';
  if (holder) return election ? 'leader' : 'holder';
  return `${election ? 'follower' : 'waiter'} #${position}`;
}

/** A lock's kind as one label: `semaphore (3 permits)`, `read/write`, `curator exclusive`, `curator election`, ... */
export function kindLabel(entry: LockViewEntry): string {
  const kind = entry.layout === 'nestjs-zk-lock' ? entry.kind : `${entry.layout} ${entry.kind}`;
  return entry.permits === undefined ? kind : `${kind} (${entry.permits} permits)`;
}

/**
 * ZooKeeper's data model in memory, with the server's rules where the recipes can see them: zxids
 * that grow with every write, sequence numbers counting the parent's creates, pzxid raised by each
 * child created or deleted, ephemeral nodes that die with their session and cannot have children,
 * container nodes reaped once their last child goes, one-shot data watches, ACLs checked as the
 * server checks them, and failures as the same result codes (and so the same typed errors).
 */
import type { ZkStat } from '../../zookeeper/native-handle.js';
import { ZK_PERMS, type ZkAcl } from '../../zookeeper/zk-acl.js';
import { ZK_CODES, zkError } from '../../zookeeper/zk-errors.js';
import type { CreateMode, MultiOp, NodeChange } from '../../zookeeper/zk-session-api.js';
import { allows, type Caller, fixAcl, validatePath } from './znode-rules.js';
import { newZNode, OPEN_ACL, parentOf, statOf, type ZNode } from './znode.js';

export type { Caller } from './znode-rules.js';

/** What a server tells a data watch: the node was written or deleted. */
type ServerChange = Exclude<NodeChange, 'unknown'>;

/** A data watch: `fire` runs once on the node's next change or deletion, and is told which. */
export interface TreeWatcher {
  readonly sessionId: string;
  fire(change: ServerChange): void;
}

/** The in-memory server's tree: its nodes, sessions' ephemeral nodes, data watches and containers. */
export class ZNodeTree {
  private lastZxid = 0;
  private readonly nodes = new Map<string, ZNode>();
  private readonly ephemerals = new Map<string, Set<string>>();
  private readonly watches = new Map<string, Set<TreeWatcher>>();
  private readonly reapCandidates = new Set<string>();
  private reapScheduled = false;

  constructor(
    /** Delay before empty containers are reaped, in ms; 0: a microtask; false: never. */
    private readonly reapDelayMs: number | false,
  ) {
    // A real server has these from the start: a listing of '/' shows `zookeeper`.
    this.nodes.set('/', newZNode(0, '0', false));
    this.addChild('/', '/zookeeper', newZNode(0, '0', false), 0);
    this.addChild('/zookeeper', '/zookeeper/quota', newZNode(0, '0', false), 0);
    this.addChild('/zookeeper', '/zookeeper/config', newZNode(0, '0', false), 0);
  }

  /** The zxid of the last write. */
  get zxid(): number {
    return this.lastZxid;
  }

  /** A session begins: on a server that is a transaction of its own. */
  openSession(sessionId: string): void {
    this.nextZxid();
    this.ephemerals.set(sessionId, new Set());
  }

  /** A session ends (closed or expired): one transaction deletes its ephemeral nodes and drops its watches. */
  closeSession(sessionId: string): void {
    const owned = this.ephemerals.get(sessionId);
    if (!owned) return;
    this.ephemerals.delete(sessionId);
    for (const [path, watchers] of this.watches) {
      for (const watcher of watchers) if (watcher.sessionId === sessionId) watchers.delete(watcher);
      if (watchers.size === 0) this.watches.delete(path);
    }
    const zxid = this.nextZxid();
    for (const path of [...owned].sort()) this.removeNode(path, zxid);
  }

  create(caller: Caller, path: string, data: Buffer, mode: CreateMode, acl: readonly ZkAcl[] = OPEN_ACL): string {
    const sequential = mode === 'EPHEMERAL_SEQUENTIAL';
    validatePath(path, 'create', sequential);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw zkError(ZK_CODES.NONODE, 'create', path);
    this.checkPerm(caller, parent, ZK_PERMS.CREATE, 'create', path);
    const name = sequential ? `${path}${String(parent.cversion).padStart(10, '0')}` : path;
    if (this.nodes.has(name)) throw zkError(ZK_CODES.NODEEXISTS, 'create', path);
    if (parent.ephemeralOwner !== '0') throw zkError(ZK_CODES.NOCHILDRENFOREPHEMERALS, 'create', path);
    const ephemeral = mode === 'EPHEMERAL' || mode === 'EPHEMERAL_SEQUENTIAL';
    const zxid = this.nextZxid();
    const node = newZNode(zxid, ephemeral ? caller.sessionId : '0', mode === 'CONTAINER', Buffer.from(data), acl);
    this.addChild(parentPath, name, node, zxid);
    if (ephemeral) this.ephemerals.get(caller.sessionId)?.add(name);
    return name;
  }

  delete(caller: Caller, path: string): void {
    validatePath(path, 'delete', false);
    const node = this.nodes.get(path);
    if (!node || path === '/') throw zkError(path === '/' ? ZK_CODES.BADARGUMENTS : ZK_CODES.NONODE, 'delete', path);
    this.checkPerm(caller, this.nodes.get(parentOf(path))!, ZK_PERMS.DELETE, 'delete', path);
    if (node.children.size > 0) throw zkError(ZK_CODES.NOTEMPTY, 'delete', path);
    this.removeNode(path, this.nextZxid());
  }

  getData(caller: Caller, path: string, op = 'getData'): { data: Buffer; stat: ZkStat } {
    const node = this.readable(caller, path, op);
    return { data: Buffer.from(node.data), stat: statOf(node) };
  }

  getChildren(caller: Caller, path: string): { children: string[]; stat: ZkStat } {
    const node = this.readable(caller, path, 'getChildren');
    return { children: [...node.children], stat: statOf(node) };
  }

  setData(caller: Caller, path: string, data: Buffer): void {
    const node = this.existing(path, 'setData');
    this.checkPerm(caller, node, ZK_PERMS.WRITE, 'setData', path);
    node.data = Buffer.from(data);
    node.version += 1;
    node.mzxid = this.nextZxid();
    node.mtime = new Date();
    this.fireWatches(path, 'changed');
  }

  /**
   * One transaction: every operation is checked against the tree as the ones before it would leave
   * it, and only then are they all applied, in order; otherwise the first failure is thrown and
   * nothing changes.
   */
  multi(caller: Caller, ops: readonly MultiOp[]): void {
    const path = [...new Set(ops.map((op) => op.path))].join(',');
    const deleted = new Set<string>();
    const written = new Map<string, number>();
    const created = new Set<string>();
    for (const op of ops) {
      if (op.op === 'create') {
        const exists = (at: string) => created.has(at) || (!deleted.has(at) && this.nodes.has(at));
        validatePath(op.path, 'multi', false);
        if (!exists(parentOf(op.path))) throw zkError(ZK_CODES.NONODE, 'multi', path);
        if (exists(op.path)) throw zkError(ZK_CODES.NODEEXISTS, 'multi', path);
        const parent = this.nodes.get(parentOf(op.path));
        if (parent) this.checkPerm(caller, parent, ZK_PERMS.CREATE, 'multi', path);
        created.add(op.path);
        continue;
      }
      const node = deleted.has(op.path) ? undefined : this.nodes.get(op.path);
      if (!node) throw zkError(ZK_CODES.NONODE, 'multi', path);
      if (op.op === 'check') {
        if (op.version !== -1 && (written.get(op.path) ?? node.version) !== op.version) throw zkError(ZK_CODES.BADVERSION, 'multi', path);
      } else if (op.op === 'setData') {
        this.checkPerm(caller, node, ZK_PERMS.WRITE, 'multi', path);
        written.set(op.path, (written.get(op.path) ?? node.version) + 1);
      } else {
        if (op.path === '/') throw zkError(ZK_CODES.BADARGUMENTS, 'multi', path);
        this.checkPerm(caller, this.nodes.get(parentOf(op.path))!, ZK_PERMS.DELETE, 'multi', path);
        if ([...node.children].some((child) => !deleted.has(`${op.path}/${child}`))) throw zkError(ZK_CODES.NOTEMPTY, 'multi', path);
        deleted.add(op.path);
      }
    }
    for (const op of ops) {
      if (op.op === 'setData') this.setData(caller, op.path, op.data);
      else if (op.op === 'delete') this.delete(caller, op.path);
      else if (op.op === 'create') this.create(caller, op.path, op.data, op.mode, op.acl);
    }
  }

  /** As ZooKeeper 3.6+: needs READ or ADMIN, and only ADMIN sees digest hashes (others get `user:x`). */
  getAcl(caller: Caller, path: string): ZkAcl[] {
    const node = this.existing(path, 'getAcl');
    this.checkPerm(caller, node, ZK_PERMS.READ | ZK_PERMS.ADMIN, 'getAcl', path);
    const admin = allows(caller, node.acl, ZK_PERMS.ADMIN);
    return node.acl.map((entry) =>
      entry.scheme === 'digest' && !admin ? { ...entry, id: `${entry.id.slice(0, entry.id.indexOf(':'))}:x` } : { ...entry },
    );
  }

  setAcl(caller: Caller, path: string, acl: readonly ZkAcl[]): void {
    const node = this.existing(path, 'setAcl');
    this.checkPerm(caller, node, ZK_PERMS.ADMIN, 'setAcl', path);
    node.acl = fixAcl(caller, acl, 'setAcl', path);
    node.aversion += 1;
    this.nextZxid();
  }

  /** Reads a node and leaves `watcher` on it; null (and no watch) when it does not exist. */
  watch(caller: Caller, path: string, watcher: TreeWatcher): ZkStat | null {
    if (!this.nodes.has(path)) return null;
    const { stat } = this.getData(caller, path, 'watchNode');
    let watchers = this.watches.get(path);
    if (!watchers) this.watches.set(path, (watchers = new Set()));
    watchers.add(watcher);
    return stat;
  }

  unwatch(path: string, watcher: TreeWatcher): void {
    const watchers = this.watches.get(path);
    watchers?.delete(watcher);
    if (watchers?.size === 0) this.watches.delete(path);
  }

  /** Paths watched, each with the number of sessions watching it (what `wchp` shows on a server). */
  watchesByPath(): Map<string, number> {
    const result = new Map<string, number>();
    for (const [path, watchers] of this.watches) result.set(path, new Set([...watchers].map((w) => w.sessionId)).size);
    return result;
  }

  has(path: string): boolean {
    return this.nodes.has(path);
  }

  /** Every path at or below `under`, sorted. */
  paths(under: string): string[] {
    const prefix = under === '/' ? '/' : `${under}/`;
    return [...this.nodes.keys()].filter((path) => path === under || path.startsWith(prefix)).sort();
  }

  private readable(caller: Caller, path: string, op: string): ZNode {
    const node = this.existing(path, op);
    this.checkPerm(caller, node, ZK_PERMS.READ, op, path);
    return node;
  }

  private existing(path: string, op: string): ZNode {
    validatePath(path, op, false);
    const node = this.nodes.get(path);
    if (!node) throw zkError(ZK_CODES.NONODE, op, path);
    return node;
  }

  private addChild(parentPath: string, path: string, node: ZNode, zxid: number): void {
    const parent = this.nodes.get(parentPath)!;
    this.nodes.set(path, node);
    parent.children.add(path.slice(path.lastIndexOf('/') + 1));
    parent.cversion += 1;
    parent.pzxid = zxid;
  }

  private removeNode(path: string, zxid: number): void {
    const node = this.nodes.get(path);
    if (!node) return;
    this.nodes.delete(path);
    if (node.ephemeralOwner !== '0') this.ephemerals.get(node.ephemeralOwner)?.delete(path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    parent.children.delete(path.slice(path.lastIndexOf('/') + 1));
    parent.pzxid = zxid;
    this.fireWatches(path, 'deleted');
    if (parent.container && parent.children.size === 0) this.scheduleReap(parentPath);
  }

  private fireWatches(path: string, change: ServerChange): void {
    const watchers = this.watches.get(path);
    if (!watchers) return;
    this.watches.delete(path);
    for (const watcher of watchers) watcher.fire(change);
  }

  /** The server's container manager: deletes containers that had children and have none left. */
  private scheduleReap(path: string): void {
    if (this.reapDelayMs === false) return;
    this.reapCandidates.add(path);
    if (this.reapScheduled) return;
    this.reapScheduled = true;
    const reap = (): void => {
      this.reapScheduled = false;
      const candidates = [...this.reapCandidates];
      this.reapCandidates.clear();
      for (const candidate of candidates) {
        const node = this.nodes.get(candidate);
        if (node?.container && node.children.size === 0 && node.cversion > 0) this.removeNode(candidate, this.nextZxid());
      }
    };
    if (this.reapDelayMs === 0) queueMicrotask(reap);
    else setTimeout(reap, this.reapDelayMs).unref();
  }

  private checkPerm(caller: Caller, node: ZNode, perm: number, op: string, path: string): void {
    if (!allows(caller, node.acl, perm)) throw zkError(ZK_CODES.NOAUTH, op, path);
  }

  private nextZxid(): number {
    this.lastZxid += 1;
    return this.lastZxid;
  }
}

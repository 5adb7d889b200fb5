import type { ZkStat } from '../../zookeeper/native-client.js';
import { SessionLifecycle } from '../../zookeeper/session-lifecycle.js';
import type { ZkAcl } from '../../zookeeper/zk-acl.js';
import type { LockLossReason } from '../../errors.js';
import { ZK_CODES, ZkConnectionLossError, ZkSessionLostError } from '../../zookeeper/zk-errors.js';
import type { ChildList, CreateMode, Lease, MultiOp, NodeChange, NodeData, NodeWatch, ZkSessionApi } from '../../zookeeper/zk-session-api.js';
import type { HistorySeen } from '../../zookeeper/zxid-watermark.js';
import type { Caller, TreeWatcher, ZNodeTree } from './znode-tree.js';
import { rejectOnThrow } from '../../shared/promises.js';

const NOTHING_SEEN: HistorySeen = { highest: 0, queues: new Map() };

/**
 * One session on the in-memory tree, with ZkSession's contract: requests are applied in the order
 * they are sent and answered asynchronously (promises only, no timers, so fake timers cannot stall
 * them); watch events arrive asynchronously too, and wait while the connection is down; once the
 * session ends, `lost` aborts and every request rejects with ZkSessionLostError.
 */
export class InMemorySession extends SessionLifecycle implements ZkSessionApi {
  /** Watch events that fired while disconnected: delivered on reconnect, as a real client re-arms its watches. */
  private heldEvents: (() => void)[] = [];
  private readonly caller: Caller;

  constructor(
    private readonly tree: ZNodeTree,
    readonly id: string,
    identities: readonly { scheme: string; id: string }[],
    /** The session timeout, in ms. */
    readonly timeoutMs: number,
  ) {
    super();
    this.caller = { sessionId: id, identities };
  }

  /** The connection dropped or came back (the session lives on while disconnected). */
  override setConnected(connected: boolean): void {
    if (connected) {
      const events = this.heldEvents;
      this.heldEvents = [];
      for (const event of events) queueMicrotask(event);
    }
    super.setConnected(connected);
  }

  /**
   * The in-memory server answers at once and expires a session only when told to (or after
   * sessionTimeoutMs disconnected): its sessions need no lease, and it never runs out.
   */
  readonly lease: Lease = {
    validUntil: Number.POSITIVE_INFINITY,
    lengthMs: Number.POSITIVE_INFINITY,
    untilAt: () => Number.POSITIVE_INFINITY,
    retain: () => undefined,
    release: () => undefined,
    checkNow: () => !this.lost.aborted,
  };
  /** The in-memory tree's history never goes back: nothing is tracked. */
  readonly watermark: HistorySeen = NOTHING_SEEN;

  /** Ends the session for its users (the tree has already dropped its nodes). Idempotent. */
  markLost(detail: string, end: LockLossReason): void {
    this.end(new ZkSessionLostError('session', this.id, detail, end), () => {
      this.heldEvents = [];
    });
  }

  create(path: string, data: Buffer | string, mode: CreateMode, acl?: readonly ZkAcl[]): Promise<string> {
    return this.call('create', path, () =>
      acl && acl.length > 0 ? this.tree.create(this.caller, path, Buffer.from(data), mode, acl) : this.tree.create(this.caller, path, Buffer.from(data), mode),
    );
  }

  getChildren(path: string): Promise<ChildList> {
    return this.call('getChildren', path, () => this.tree.getChildren(this.caller, path));
  }

  getData(path: string): Promise<NodeData> {
    return this.call('getData', path, () => this.tree.getData(this.caller, path));
  }

  getAcl(path: string): Promise<ZkAcl[]> {
    return this.call('getAcl', path, () => this.tree.getAcl(this.caller, path));
  }

  setAcl(path: string, acl: readonly ZkAcl[]): Promise<void> {
    return this.call('setAcl', path, () => this.tree.setAcl(this.caller, path, acl));
  }

  setData(path: string, data: Buffer): Promise<void> {
    return this.call('setData', path, () => this.tree.setData(this.caller, path, data));
  }

  delete(path: string): Promise<void> {
    return this.call('delete', path, () => this.tree.delete(this.caller, path));
  }

  multi(ops: readonly MultiOp[]): Promise<void> {
    return this.call('multi', ops[0]?.path ?? '/', () => this.tree.multi(this.caller, ops));
  }

  watchNode(path: string, onChange: (change: NodeChange) => void): NodeWatch {
    let cancelled = false;
    let fired = false;
    const notify = (change: NodeChange): void => {
      if (cancelled || fired || this.lost.aborted) return;
      fired = true;
      onChange(change);
    };
    const watcher: TreeWatcher = {
      sessionId: this.id,
      fire: (change) => {
        if (this.connected) queueMicrotask(() => notify(change));
        else this.heldEvents.push(() => notify(change));
      },
    };
    const armed = this.call<ZkStat | null>('watchNode', path, () => this.tree.watch(this.caller, path, watcher));
    // As with ZkSession: no node, no watch, and the watcher is told at once.
    armed.then(
      (stat) => {
        if (!stat) notify('deleted');
      },
      () => notify('unknown'),
    );
    return {
      armed,
      cancel: () => {
        cancelled = true;
        this.tree.unwatch(path, watcher);
      },
    };
  }

  /** Applies one request now, in sending order, and answers it asynchronously. */
  private call<T>(op: string, path: string, apply: () => T): Promise<T> {
    if (this.lost.aborted) return Promise.reject(this.lost.reason as Error);
    // A real client fails requests it cannot send with CONNECTIONLOSS; callers wait for whenConnected.
    if (!this.connected) return Promise.reject(new ZkConnectionLossError(ZK_CODES.CONNECTIONLOSS, op, path));
    return rejectOnThrow(() => Promise.resolve(apply()));
  }
}

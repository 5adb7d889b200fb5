import { setMaxListeners } from 'node:events';
import type { ZkStat } from '../../zookeeper/native-client.js';
import { waitInSet } from '../../zookeeper/waiters.js';
import type { ZkAcl } from '../../zookeeper/zk-acl.js';
import { ZK_CODES, ZkConnectionLossError, ZkSessionLostError } from '../../zookeeper/zk-errors.js';
import type { ChildList, CreateMode, NodeData, NodeWatch, ZkSessionApi } from '../../zookeeper/zk-session.js';
import type { Caller, TreeWatcher, ZNodeTree } from './znode-tree.js';

/**
 * One session on the in-memory tree, with ZkSession's contract: requests are applied in the order
 * they are sent and answered asynchronously (promises only, no timers, so fake timers cannot stall
 * them); watch events arrive asynchronously too, and wait while the connection is down; once the
 * session ends, `lost` aborts and every request rejects with ZkSessionLostError.
 */
export class InMemorySession implements ZkSessionApi {
  connected = true;
  private readonly lostController = new AbortController();
  private connectWaiters = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();
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
    this.caller = { sessionId: id, identities };
    setMaxListeners(0, this.lostController.signal);
  }

  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /** The connection dropped or came back (the session lives on while disconnected). */
  setConnected(connected: boolean): void {
    this.connected = connected;
    if (!connected) return;
    const events = this.heldEvents;
    this.heldEvents = [];
    for (const event of events) queueMicrotask(event);
    const waiters = this.connectWaiters;
    this.connectWaiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Ends the session for its users (the tree has already dropped its nodes). Idempotent. */
  markLost(detail: string): void {
    if (this.lost.aborted) return;
    this.connected = false;
    this.heldEvents = [];
    this.lostController.abort(new ZkSessionLostError('session', this.id, detail));
    for (const wake of this.connectWaiters) wake();
    this.connectWaiters.clear();
    const listeners = [...this.lostListeners];
    this.lostListeners.clear();
    for (const listener of listeners) listener();
  }

  onLost(listener: () => void): () => void {
    if (this.lost.aborted) {
      listener();
      return () => undefined;
    }
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  whenConnected(signal?: AbortSignal): Promise<void> {
    if (this.lost.aborted) return Promise.reject(this.lost.reason as Error);
    if (this.connected) return Promise.resolve();
    return waitInSet(this.connectWaiters, signal).then(() => {
      if (this.lost.aborted) throw this.lost.reason as Error;
    });
  }

  create(path: string, data: Buffer | string, mode: CreateMode): Promise<string> {
    return this.call('create', path, () => this.tree.create(this.caller, path, Buffer.from(data), mode));
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

  watchNode(path: string, onChange: () => void): NodeWatch {
    let cancelled = false;
    let fired = false;
    const notify = (): void => {
      if (cancelled || fired || this.lost.aborted) return;
      fired = true;
      onChange();
    };
    const watcher: TreeWatcher = {
      sessionId: this.id,
      fire: () => {
        if (this.connected) queueMicrotask(notify);
        else this.heldEvents.push(notify);
      },
    };
    const armed = this.call<ZkStat | null>('watchNode', path, () => this.tree.watch(this.caller, path, watcher));
    // As with ZkSession: no node, no watch, and the watcher is told at once.
    armed.then(
      (stat) => {
        if (!stat) notify();
      },
      () => notify(),
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
    try {
      return Promise.resolve(apply());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}

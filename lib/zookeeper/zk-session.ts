import { CREATE_FLAGS, MULTI_OPS, type NativeClient, type NativeHandle, type NativeMultiOp, pingAnsweredAt, SOCKET_DROPPED_STATE } from './native-client.js';
import { PathWatch, type WatcherCount } from './path-watch.js';
import { SessionLease } from './session-lease.js';
import { SessionLifecycle } from './session-lifecycle.js';
import type { ZkAcl } from './zk-acl.js';
import type { LockLossReason } from '../errors.js';
import { endOfSession, serverAnswered, ZK_CODES, ZkConnectionLossError, type ZkSessionAuthError, ZkSessionLostError, zkError } from './zk-errors.js';
import type { ChildList, CreateMode, MultiOp, NodeChange, NodeData, NodeWatch, WatchedStat, ZkSessionApi } from './zk-session-api.js';
import { type QueueSeen, ZxidWatermark } from './zxid-watermark.js';

const SEND_RETRY_PAUSE_MS = 10;
const EMPTY_DATA = Buffer.alloc(0);

/**
 * Implements ZkSessionApi over one native handle. ZkConnection creates it and tells it when the
 * connection state changes; it never reconnects by itself.
 */
export class ZkSession extends SessionLifecycle implements ZkSessionApi, WatcherCount {
  readonly id: string;
  private readonly pending = new Set<PendingRequest>();
  private readonly watches = new Map<string, PathWatch>();
  private handle: NativeHandle;
  private readonly lease: SessionLease;
  /** The waiters still waiting on this session's watches (see syncWatchLease). */
  private liveWatchers = 0;
  /** The watches hold the lease (waiters keep it renewed, see syncWatchLease). */
  private watchesHoldLease = false;

  constructor(
    /** The native handle the session runs on; ZkConnection can move it to another (`adoptHandle`). */
    private clientHandle: NativeClient,
    /** Negotiated session timeout in ms. */
    readonly timeoutMs: number,
    /** How long an answer keeps the lease, in ms: the session timeout less the lease margin. */
    leaseLengthMs: number,
    /**
     * Told when a reply shows the session is over (expired, closing, moved), or its lease ran out
     * while in use, so that it is ended and replaced.
     */
    private readonly onEnded: (session: ZkSession, detail: string, end: LockLossReason, refusal?: ZkSessionAuthError) => void = () => undefined,
    /**
     * Told, synchronously, when the C client dropped its socket inside a request: its handle must be
     * closed before the event loop polls again (see `call`).
     */
    private readonly onSocketDropped: (session: ZkSession) => void = () => undefined,
    /** The connection's highest zxid seen, which every answer with a Stat raises. */
    private readonly watermark: ZxidWatermark = new ZxidWatermark(),
  ) {
    super();
    this.handle = clientHandle.native;
    this.id = this.handle.client_id;
    this.lease = new SessionLease(
      leaseLengthMs,
      () => this.call<void>('exists', '/', (done) => this.handle.a_exists('/', false, (rc) => done(rc, undefined))),
      (silentMs) =>
        this.onEnded(
          this,
          `its lease ran out: no answer from ZooKeeper to a request or ping sent in the last ${Math.round(silentMs)} ms, ` +
            `so the server may expire the session at any moment (lease: session timeout ${timeoutMs} ms less leaseMarginMs ${timeoutMs - leaseLengthMs} ms)`,
          'lease-expired',
        ),
      () => pingAnsweredAt(this.handle),
      timeoutMs,
    );
    // Node watches are set with the client's default watcher, which the binding reports as events of
    // the client: nothing is kept per watch (a_get with watch true leaves no record in the binding).
    this.listen(clientHandle, 'on');
  }

  override setConnected(connected: boolean): void {
    super.setConnected(connected);
    if (connected) this.lease.connected();
  }

  /** The native handle the session runs on now. */
  get client(): NativeClient {
    return this.clientHandle;
  }

  get leaseValidUntil(): number {
    return this.lease.validUntil;
  }

  leaseValidAt(now: number): number {
    return this.lease.untilAt(now);
  }

  get leaseMs(): number {
    return this.lease.lengthMs;
  }

  /** Renewal reads the lease has sent. */
  get leaseProbes(): number {
    return this.lease.probes;
  }

  retainLease(): void {
    this.lease.retain();
  }

  releaseLease(): void {
    this.lease.release();
  }

  checkLease(): boolean {
    return this.lease.checkNow();
  }

  get highestZxid(): number {
    return this.watermark.highest;
  }

  queueSeen(path: string): QueueSeen | undefined {
    return this.watermark.queue(path);
  }

  /** Called by ZkConnection: ends the session for its users. Idempotent. */
  markLost(detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void {
    if (this.lost.aborted) return;
    const reason = new ZkSessionLostError('session', this.id, detail, end, refusal);
    this.lease.end();
    this.end(reason, () => {
      this.listen(this.client, 'off');
      for (const request of [...this.pending]) request.fail(reason);
      this.pending.clear();
      this.watches.clear();
      this.liveWatchers = 0;
      this.syncWatchLease();
    });
  }

  /**
   * Called by ZkConnection when the handle dropped its socket, before it closes that handle: the
   * requests in flight on it fail with a connection loss (they may or may not have reached the
   * server, as on any dropped connection), so that its closing answers nobody twice. Its watches go
   * with it: every waiter is woken, once the session runs on its next handle (`adoptHandle`), to look
   * again: a spurious wake-up, which waiters take like any other.
   */
  releaseHandle(): void {
    for (const request of [...this.pending]) request.fail(new ZkConnectionLossError(ZK_CODES.CONNECTIONLOSS, request.op, request.path));
    this.pending.clear();
    this.listen(this.clientHandle, 'off');
    const watches = [...this.watches];
    this.watches.clear();
    queueMicrotask(() => {
      for (const [path, watch] of watches) this.fireWatch(path, watch, 'unknown');
    });
  }

  /** The session goes on through `next`, a handle that resumes it. */
  adoptHandle(next: NativeClient): void {
    this.clientHandle = next;
    this.handle = next.native;
    this.listen(next, 'on');
  }

  create(path: string, data: Buffer | string, mode: CreateMode, acl?: readonly ZkAcl[]): Promise<string> {
    return this.call<string>('create', path, (done) =>
      acl && acl.length > 0
        ? this.handle.a_create_acl(path, data, CREATE_FLAGS[mode], nativeAcl(acl), (rc, _msg, created) => done(rc, created))
        : this.handle.a_create(path, data, CREATE_FLAGS[mode], (rc, _msg, created) => done(rc, created)),
    );
  }

  getChildren(path: string): Promise<ChildList> {
    return this.call<ChildList>('getChildren', path, (done) =>
      this.handle.a_get_children2(path, false, (rc, _msg, children, stat) => {
        if (rc === 0) this.watermark.see(stat, path);
        done(rc, { children, stat });
      }),
    );
  }

  getData(path: string): Promise<NodeData> {
    return this.call<NodeData>('getData', path, (done) =>
      this.handle.a_get(path, false, (rc, _msg, stat, data) => {
        if (rc === 0) this.watermark.see(stat);
        done(rc, { data: data ?? EMPTY_DATA, stat });
      }),
    );
  }

  getAcl(path: string): Promise<ZkAcl[]> {
    return this.call<ZkAcl[]>('getAcl', path, (done) =>
      this.handle.a_get_acl(path, (rc, _msg, acl) => done(rc, (acl ?? []).map((e) => ({ scheme: e.scheme, id: e.auth, perms: e.perms })))),
    );
  }

  setAcl(path: string, acl: readonly ZkAcl[]): Promise<void> {
    return this.call<void>('setAcl', path, (done) => this.handle.a_set_acl(path, -1, nativeAcl(acl), (rc) => done(rc, undefined)));
  }

  setData(path: string, data: Buffer): Promise<void> {
    return this.call<void>('setData', path, (done) => this.handle.a_set(path, data, -1, (rc) => done(rc, undefined)));
  }

  watchNode(path: string, onChange: (change: NodeChange) => void): NodeWatch {
    let watch = this.watches.get(path);
    if (!watch) {
      const created = new PathWatch(this, path);
      watch = created;
      this.watches.set(path, created);
      // The default watcher: its events name the path (see the constructor). Only the version is
      // kept of the Stat.
      const answer = this.call<WatchedStat | null>('watchNode', path, (done) =>
        this.handle.a_get(path, true, (rc, _msg, stat) => {
          if (rc === ZK_CODES.NONODE) {
            this.fireWatch(path, created, 'deleted'); // nothing to watch: no watch was left
            done(0, null);
          } else done(rc, rc === 0 ? { version: stat.version } : null);
        }),
      );
      created.arming(answer, () => this.fireWatch(path, created, 'unknown'));
    }
    return watch.add(onChange);
  }

  delete(path: string): Promise<void> {
    return this.call<void>('delete', path, (done) => this.handle.a_delete_(path, -1, (rc) => done(rc, undefined)));
  }

  multi(ops: readonly MultiOp[]): Promise<void> {
    const native: NativeMultiOp[] = ops.map((op): NativeMultiOp => {
      switch (op.op) {
        case 'check':
          return { type: MULTI_OPS.check, path: op.path, version: op.version };
        case 'create':
          return { type: MULTI_OPS.create, path: op.path, data: op.data, flags: CREATE_FLAGS[op.mode], ...(op.acl && op.acl.length > 0 && { acl: nativeAcl(op.acl) }) };
        case 'setData':
          return { type: MULTI_OPS.setData, path: op.path, data: op.data };
        case 'delete':
          return { type: MULTI_OPS.delete, path: op.path };
      }
    });
    return this.call<void>('multi', multiPath(ops), (done) => this.handle.a_multi(native, (rc) => done(rc, undefined)));
  }

  /** A node watched with the default watcher changed or went: the binding emits (event, handle, path). */
  private readonly onNodeChanged = (_handle: unknown, path: string): void => this.nodeEvent(path, 'changed');
  private readonly onNodeDeleted = (_handle: unknown, path: string): void => this.nodeEvent(path, 'deleted');

  /** The client events of the default watcher that end a data watch (set by getData). */
  private listen(client: NativeClient, method: 'on' | 'off'): void {
    client[method]('changed', this.onNodeChanged);
    client[method]('deleted', this.onNodeDeleted);
  }

  private nodeEvent(path: string, change: NodeChange): void {
    const watch = this.watches.get(path);
    if (watch) this.fireWatch(path, watch, change);
  }

  private fireWatch(path: string, watch: PathWatch, change: NodeChange): void {
    if (this.watches.get(path) === watch) this.watches.delete(path);
    for (const callback of watch.drain()) callback(change);
  }

  /** WatcherCount: a waiter began or stopped waiting on a watch. */
  watchers(delta: number): void {
    if (this.lost.aborted) return; // ended: its watches went with it
    this.liveWatchers += delta;
    this.syncWatchLease();
  }

  /**
   * WatcherCount: nobody waits on `watch` any more. A set watch is removed from the server, so that
   * a waiter that timed out or was aborted leaves nothing behind (ZooKeeper would otherwise keep it
   * until the node changes or the session ends). One still being set is removed once it is (see
   * PathWatch.arming). The path is free at once for a new watch: this session's requests reach the
   * server in order, so a later watch on it is set after this removal.
   */
  unwatched(watch: PathWatch): void {
    if (this.lost.aborted || !watch.isSet || this.watches.get(watch.path) !== watch) return;
    this.watches.delete(watch.path);
    // Best effort, and nobody waits for it: ZNOWATCHER when the watch fired meanwhile; a connection
    // lost first leaves the watch until it fires or the session ends, as before.
    this.call<void>('removeWatches', watch.path, (done) => this.handle.a_remove_data_watches(watch.path, (rc) => done(rc, undefined))).catch(
      () => undefined,
    );
  }

  /**
   * A waiter with a watch set may be granted by the watch's event alone (a grant by write), without a
   * request whose answer would renew the lease: so the lease is kept renewed while anyone waits on
   * a watch (a cancelled waiter's watch, which may still be set on the server until its removal
   * gets there, does not count).
   */
  private syncWatchLease(): void {
    const hold = this.liveWatchers > 0;
    if (hold === this.watchesHoldLease) return;
    this.watchesHoldLease = hold;
    if (hold) this.lease.retain();
    else this.lease.release();
  }

  /** Sends one request; settles once, from the reply or from the session ending, whichever is first. */
  private call<T>(op: string, path: string, send: (done: (rc: number, value: T) => void) => number): Promise<T> {
    if (this.lost.aborted) return Promise.reject(this.lost.reason as Error);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const request: PendingRequest = {
        op,
        path,
        fail: (error: Error): void => {
          if (settled) return;
          settled = true;
          this.pending.delete(request);
          const ended = this.lost.aborted ? undefined : endOfSession(error);
          if (ended) this.onEnded(this, ended.detail, ended.end, ended.refusal);
          reject(error);
        },
      };
      this.pending.add(request);
      // Taken before the send: the server hears of the request after this, whenever it goes out.
      const sentAt = performance.now();
      let sent: number;
      try {
        sent = send((rc, value) => {
          if (rc === 0 || serverAnswered(rc)) this.lease.answered(sentAt);
          if (settled) return;
          if (rc !== 0) return request.fail(zkError(rc, op, path));
          settled = true;
          this.pending.delete(request);
          resolve(value);
        });
      } catch (error) {
        return request.fail(error as Error);
      }
      if (sent === 0) {
        // While connected, a request is sent at once. If the send fails, the C client closes its
        // socket there and then, silently, and leaves this request and those in flight queued for
        // the old connection: going on with the handle would match replies to the wrong requests.
        // Only the caller can see it (the addon closes its poll watcher within the call), so the
        // session is moved to a new handle before the event loop polls again.
        if (this.connected && this.handle.state === SOCKET_DROPPED_STATE) this.onSocketDropped(this);
        return;
      }
      if (sent !== ZK_CODES.MARSHALLINGERROR && sent !== ZK_CODES.CONNECTIONLOSS) return request.fail(zkError(sent, op, path));
      // Not queued (the C client refuses while its handle is closing): report a connection loss,
      // after a short pause so that callers retrying on connection loss cannot spin; the session's
      // end follows and stops them.
      setTimeout(() => request.fail(new ZkConnectionLossError(sent, op, path)), SEND_RETRY_PAUSE_MS);
    });
  }
}

/** An ACL as the binding takes it (it reads `auth` and `perm`). */
function nativeAcl(acl: readonly ZkAcl[]): { scheme: string; auth: string; perm: number }[] {
  return acl.map((entry) => ({ scheme: entry.scheme, auth: entry.id, perm: entry.perms }));
}

/** The paths of a transaction's operations, each once, for its errors. */
function multiPath(ops: readonly MultiOp[]): string {
  return [...new Set(ops.map((op) => op.path))].join(',');
}

/** A request in flight, and how to fail it when the session ends or its handle is replaced. */
interface PendingRequest {
  readonly op: string;
  readonly path: string;
  fail(error: Error): void;
}

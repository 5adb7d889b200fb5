import { type NativeClient, type NativeHandle, pingAnsweredAt } from './native-handle.js';
import { PathWatch, type WatcherCount } from './path-watch.js';
import { SessionLease } from './session-lease.js';
import { EXISTS, SessionRequests } from './session-requests.js';
import type { LockLossReason } from '../errors.js';
import { ZK_CODES, ZkConnectionLossError, type ZkSessionAuthError, ZkSessionLostError } from './zk-errors.js';
import type { NodeChange, NodeWatch, WatchedStat, ZkSessionApi } from './zk-session-api.js';
import { ZxidWatermark } from './zxid-watermark.js';

/**
 * Implements ZkSessionApi over one native handle. SessionHandles (the connection's handles) creates
 * it and tells it when the connection state changes; it never reconnects by itself.
 */
export class ZkSession extends SessionRequests implements ZkSessionApi, WatcherCount {
  readonly id: string;
  private readonly watches = new Map<string, PathWatch>();
  protected handle: NativeHandle;
  /** Handed out as a field: holders and the grant check call it directly, on every acquire. */
  readonly lease: SessionLease;
  /** The waiters still waiting on this session's watches (see syncWatchLease). */
  private liveWatchers = 0;
  /** The watches hold the lease (waiters keep it renewed, see syncWatchLease). */
  private watchesHoldLease = false;

  constructor(
    /** The native handle the session runs on; SessionHandles can move it to another (`adoptHandle`). */
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
    readonly watermark: ZxidWatermark = new ZxidWatermark(),
  ) {
    super();
    this.handle = clientHandle.native;
    this.id = this.handle.client_id;
    this.lease = new SessionLease(
      leaseLengthMs,
      () => this.call<void>('exists', '/', EXISTS),
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

  protected ended(detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void {
    this.onEnded(this, detail, end, refusal);
  }

  protected socketDropped(): void {
    this.onSocketDropped(this);
  }

  override setConnected(connected: boolean): void {
    super.setConnected(connected);
    if (connected) this.lease.connected();
  }

  /** The native handle the session runs on now. */
  get client(): NativeClient {
    return this.clientHandle;
  }

  /** Called by SessionHandles and SessionSlot: ends the session for its users. Idempotent. */
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
   * Called by SessionHandles when the handle dropped its socket, before it closes that handle: the
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

  watchNode(path: string, onChange: (change: NodeChange) => void): NodeWatch {
    let watch = this.watches.get(path);
    if (!watch) {
      const created = new PathWatch(this, path);
      watch = created;
      this.watches.set(path, created);
      // The default watcher: its events name the path (see the constructor). Only the version is
      // kept of the Stat.
      const answer = this.call<WatchedStat | null>('watchNode', path, (reply) =>
        this.handle.a_get(path, true, (rc, _msg, stat) => {
          if (rc === ZK_CODES.NONODE) {
            this.fireWatch(path, created, 'deleted'); // nothing to watch: no watch was left
            reply(0, undefined, null);
          } else reply(rc, undefined, rc === 0 ? { version: stat.version } : null);
        }),
      );
      created.arming(answer, () => this.fireWatch(path, created, 'unknown'));
    }
    return watch.add(onChange);
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
    this.call<void>('removeWatches', watch.path, (reply) => this.handle.a_remove_data_watches(watch.path, reply)).catch(
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
}

import { CREATE_FLAGS, MULTI_OPS, type NativeHandle, type NativeMultiOp, SOCKET_DROPPED_STATE } from './native-client.js';
import type { SessionLease } from './session-lease.js';
import { SessionLifecycle } from './session-lifecycle.js';
import type { ZkAcl } from './zk-acl.js';
import type { LockLossReason } from '../errors.js';
import { endOfSession, serverAnswered, ZK_CODES, ZkConnectionLossError, type ZkSessionAuthError, zkError } from './zk-errors.js';
import type { ChildList, CreateMode, MultiOp, NodeData } from './zk-session-api.js';
import type { ZxidWatermark } from './zxid-watermark.js';

const SEND_RETRY_PAUSE_MS = 10;
const EMPTY_DATA = Buffer.alloc(0);

/**
 * A native session's requests: each sent on the current handle, settled once from its reply or the
 * session's end, its answer renewing the lease. ZkSession adds the watches and the handle's changes.
 */
export abstract class SessionRequests extends SessionLifecycle {
  /** The requests in flight, failed when the session ends or its handle is replaced. */
  protected readonly pending = new Set<PendingRequest>();
  protected abstract handle: NativeHandle;
  protected abstract readonly lease: SessionLease;
  protected abstract readonly watermark: ZxidWatermark;
  /** A reply showed the session is over: it is ended and replaced. */
  protected abstract ended(detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void;
  /** The C client dropped its socket inside a request (see `call`). */
  protected abstract socketDropped(): void;

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

  /** Sends one request; settles once, from the reply or from the session ending, whichever is first. */
  protected call<T>(op: string, path: string, send: (done: (rc: number, value: T) => void) => number): Promise<T> {
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
          if (ended) this.ended(ended.detail, ended.end, ended.refusal);
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
        if (this.connected && this.handle.state === SOCKET_DROPPED_STATE) this.socketDropped();
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

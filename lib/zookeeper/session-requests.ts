import { CREATE_FLAGS, MULTI_OPS, type NativeAcl, type NativeHandle, type NativeMultiOp, SOCKET_DROPPED_STATE, type ZkStat } from './native-handle.js';
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
 * A request named by data: `call` sends it and shapes its answer itself, so that each request type's
 * wrapper (the lock's create, listing and delete, on every acquire) is one line that names it. A request the
 * table does not cover (a watch) passes a function that sends it and answers `reply(rc, _, value)`.
 */
export const EXISTS = 0;
const CREATE = 1;
const GET_CHILDREN = 2;
const GET_DATA = 3;
const GET_ACL = 4;
const SET_ACL = 5;
const SET_DATA = 6;
const DELETE = 7;
const MULTI = 8;
type Send = typeof EXISTS | typeof CREATE | typeof GET_CHILDREN | typeof GET_DATA | typeof GET_ACL | typeof SET_ACL | typeof SET_DATA | typeof DELETE | typeof MULTI;

/** The binding's completion: the code, then the answer's parts, which differ by request. */
export type Reply = (rc: number, msg?: unknown, first?: unknown, second?: unknown) => void;

/**
 * A native session's requests: each sent on the current handle, settled once from its reply or the
 * session's end, its answer renewing the lease. ZkSession adds the watches and the handle's changes.
 */
export abstract class SessionRequests extends SessionLifecycle {
  /** The requests in flight, failed when the session ends or its handle is replaced. */
  protected readonly pending = new Set<PendingRequest>();
  protected abstract handle: NativeHandle;
  abstract readonly lease: SessionLease;
  abstract readonly watermark: ZxidWatermark;
  /** A reply showed the session is over: it is ended and replaced. */
  protected abstract ended(detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void;
  /** The C client dropped its socket inside a request (see `call`). */
  protected abstract socketDropped(): void;

  create(path: string, data: Buffer | string, mode: CreateMode, acl?: readonly ZkAcl[]): Promise<string> {
    return this.call<string>('create', path, CREATE, data, mode, acl);
  }

  getChildren(path: string): Promise<ChildList> {
    return this.call<ChildList>('getChildren', path, GET_CHILDREN);
  }

  getData(path: string): Promise<NodeData> {
    return this.call<NodeData>('getData', path, GET_DATA);
  }

  getAcl(path: string): Promise<ZkAcl[]> {
    return this.call<ZkAcl[]>('getAcl', path, GET_ACL);
  }

  setAcl(path: string, acl: readonly ZkAcl[]): Promise<void> {
    return this.call<void>('setAcl', path, SET_ACL, acl);
  }

  setData(path: string, data: Buffer): Promise<void> {
    return this.call<void>('setData', path, SET_DATA, data);
  }

  delete(path: string): Promise<void> {
    return this.call<void>('delete', path, DELETE);
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
    return this.call<void>('multi', multiPath(ops), MULTI, native);
  }

  /**
   * Sends one request (`send` and its arguments `a`, `b`, `c`, see Send); settles once, from the
   * reply or from the session ending, whichever is first.
   */
  protected call<T>(op: string, path: string, send: Send | ((reply: Reply) => number), a?: unknown, b?: unknown, c?: unknown): Promise<T> {
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
      const reply: Reply = (rc, _msg, first, second) => {
        if (rc === 0 || serverAnswered(rc)) this.lease.answered(sentAt);
        // What the servers showed counts even when the caller gave up waiting (a late answer): the
        // history floor of the next session must not be lower than what this process saw.
        if (rc === 0 && send === GET_CHILDREN) this.watermark.see(second as ZkStat, path);
        else if (rc === 0 && send === GET_DATA) this.watermark.see(first as ZkStat);
        if (settled) return;
        if (rc !== 0) return request.fail(zkError(rc, op, path));
        settled = true;
        this.pending.delete(request);
        switch (send) {
          case CREATE:
            return resolve(first as T);
          case GET_CHILDREN:
            return resolve({ children: first, stat: second } as T);
          case GET_DATA:
            return resolve({ data: (second as Buffer | null) ?? EMPTY_DATA, stat: first } as T);
          case GET_ACL:
            return resolve(((first as NativeAcl[] | null) ?? []).map((e) => ({ scheme: e.scheme, id: e.auth, perms: e.perms })) as T);
          default:
            return resolve((typeof send === 'function' ? first : undefined) as T);
        }
      };
      const handle = this.handle;
      let sent: number;
      try {
        switch (send) {
          case EXISTS:
            sent = handle.a_exists(path, false, reply);
            break;
          case CREATE: {
            const acl = c as readonly ZkAcl[] | undefined;
            const flags = CREATE_FLAGS[b as CreateMode];
            sent = acl && acl.length > 0 ? handle.a_create_acl(path, a as Buffer | string, flags, nativeAcl(acl), reply) : handle.a_create(path, a as Buffer | string, flags, reply);
            break;
          }
          case GET_CHILDREN:
            sent = handle.a_get_children2(path, false, reply);
            break;
          case GET_DATA:
            sent = handle.a_get(path, false, reply);
            break;
          case GET_ACL:
            sent = handle.a_get_acl(path, reply);
            break;
          case SET_ACL:
            sent = handle.a_set_acl(path, -1, nativeAcl(a as readonly ZkAcl[]), reply);
            break;
          case SET_DATA:
            sent = handle.a_set(path, a as Buffer, -1, reply);
            break;
          case DELETE:
            sent = handle.a_delete_(path, -1, reply);
            break;
          case MULTI:
            sent = handle.a_multi(a as NativeMultiOp[], reply);
            break;
          default:
            sent = send(reply);
        }
      } catch (error) {
        return request.fail(error as Error);
      }
      if (sent === 0) {
        // While connected, a request is sent at once. If the send fails, the C client closes its
        // socket there and then, silently, and leaves this request and those in flight queued for
        // the old connection: going on with the handle would match replies to the wrong requests.
        // Only the caller can see it (the addon closes its poll watcher within the call), so the
        // session is moved to a new handle before the event loop polls again.
        if (this.connected && handle.state === SOCKET_DROPPED_STATE) this.socketDropped();
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

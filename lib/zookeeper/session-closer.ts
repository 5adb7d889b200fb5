import { loadNativeModule, type NativeClient, SOCKET_DROPPED_STATE } from './native-client.js';
import { serverAnswered } from './zk-errors.js';

/**
 * Ends sessions this process gave up on while the server may still keep them: a session whose
 * lease ran out (see SessionLease). Its holders were told their locks are lost, but a short
 * partition may heal before the server expires it, and its lock nodes would stand for locks nobody
 * holds until then. So the session is closed as soon as the server can be reached, within
 * `withinMs` (its timeout: by then the server has expired it anyway).
 *
 * Its handle cannot simply be closed at once: the C client, still connected, would wait for the
 * server to answer the close, blocking the event loop for up to 1.5 s. So the handle is kept until
 * it can close without waiting: when it gets an answer (the server is there), or when the C client
 * notices the silence and disconnects; in that case the session is resumed on a handle of its own,
 * only to be closed, once the server answers.
 */
export class SessionCloser {
  private readonly handles = new Set<NativeClient>();

  /** Retires `handle`, whose session this process gave up on. */
  retire(handle: NativeClient, connect: string, credentials: { id: string; password: string }, withinMs: number): void {
    this.handles.add(handle);
    let done = false;
    const finish = (resumeToClose: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.handles.delete(handle);
      handle.close();
      if (resumeToClose) this.resumeToClose(connect, credentials, withinMs);
    };
    const timer = setTimeout(() => finish(false), withinMs);
    handle.once('connecting', () => finish(true));
    handle.once('close', () => finish(false));
    try {
      handle.native.a_exists('/', false, (rc) => {
        if (serverAnswered(rc)) finish(false);
      });
    } catch {
      finish(true);
      return;
    }
    // The send met a reset connection: the C client dropped its socket and cannot go on with this
    // handle (see SessionRequests.call), so it is closed and the session resumed only to be closed.
    if (handle.native.state === SOCKET_DROPPED_STATE) finish(true);
  }

  /** Stops everything still under way (the connection is closing). */
  stop(): void {
    for (const handle of [...this.handles]) {
      this.handles.delete(handle);
      handle.close();
    }
  }

  private resumeToClose(connect: string, credentials: { id: string; password: string }, withinMs: number): void {
    // The binding would give up after ten empty polls while the partition lasts: keep trying until withinMs.
    const config = {
      connect,
      timeout: withinMs,
      debug_level: 0,
      host_order_deterministic: false,
      client_id: credentials.id,
      client_password: credentials.password,
      response_counter_limit: 2_000_000_000,
    };
    let handle: NativeClient;
    try {
      handle = new (loadNativeModule())(config);
    } catch {
      return; // nothing to do it with: the server's expiry will delete the nodes
    }
    this.handles.add(handle);
    const done = (): void => {
      clearTimeout(timer);
      if (!this.handles.delete(handle)) return;
      handle.close(); // connected, so the server answers the close and deletes the session's nodes
    };
    const timer = setTimeout(done, withinMs);
    handle.once('connect', done);
    handle.once('close', done); // refused: the session is already gone
    if (handle.native.init(config) instanceof Error) done();
  }
}

import type { LockLossReason, ZkSaslError } from '../errors.js';
import { type NativeClient, SOCKET_DROPPED_STATE } from './native-handle.js';
import { createNative, type HandleSettings, startNative } from './native-handle-start.js';
import type { SessionSlot } from './session-slot.js';
import { parseConnectString, type ResolvedHosts, resolveHosts, shuffleHosts, unresolved } from './connect-string.js';
import { sameHosts } from './ensemble-config.js';
import { EnsembleTracker } from './ensemble-tracker.js';
import { SessionCloser } from './session-closer.js';
import { describeClose, endOfSession, type ZkError, zkError, type ZkSessionAuthError } from './zk-errors.js';
import { ZkSession } from './zk-session.js';
import { ZxidWatermark } from './zxid-watermark.js';
import { type SaslFailure, saslError } from './zk-sasl-failure.js';
import { DEFAULT_LEASE_MARGIN_SHARE } from './zk-connection.options.js';

const REOPEN_RETRY_MS = 1000;

/** What the first connect (ZkConnection.connect) hears from the handles. */
export interface StartWatch {
  /** A handle connected (the first session's SASL probe goes then). */
  connected(client: NativeClient): void;
  /** SASL failed on the current handle: true when connect() was waiting, and now fails with `error`. */
  failStart(error: ZkSaslError): boolean;
}

/**
 * The native handles of one connection's sessions. The C client notices an expired session only
 * once it reconnects, so a session is declared lost here after it has been disconnected for the
 * negotiated session timeout (or when its lease ran out, or a reply showed it over); everyone hears
 * it through the session's `lost` signal, its handle is closed and a fresh session opened for new
 * work. A session whose socket dropped inside a request, or whose server left the ensemble's member
 * list, goes on from a new handle that resumes it.
 */
export class SessionHandles {
  /** The handle in use; undefined while a new one is on its way, or closed. */
  client: NativeClient | undefined;
  /** The connect string with its names looked up, for the current session (see connect-string.ts). */
  resolved: ResolvedHosts;
  /** The name each server address was looked up from (GSSAPI names servers by name). */
  readonly hostNames = new Map<string, string>();
  /**
   * The servers ended the last session for want of authentication: session() callers get this at
   * once, rather than wait for sessions the servers would close too, until a new session connects.
   */
  refusal: ZkSessionAuthError | undefined;
  /** The member list in use: the configured one until the ensemble's config names another. */
  readonly tracker: EnsembleTracker;
  /** Outlives sessions: a restored server is met by a new session (see ZxidWatermark). */
  private readonly watermark = new ZxidWatermark();
  /** Closes sessions given up on when their lease ran out, should the server still keep them. */
  private readonly closer = new SessionCloser();
  private lostTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** A new handle is on its way (its names being looked up). */
  private reopening = false;

  constructor(
    private readonly settings: HandleSettings,
    /** The current session, the state and its listeners. */
    private readonly slot: SessionSlot<ZkSession>,
    private readonly start: StartWatch,
    followEnsembleConfig: boolean,
  ) {
    this.resolved = unresolved(settings.connectionString);
    const handles = this;
    const host = {
      get client(): NativeClient | undefined {
        return handles.client;
      },
      useAddresses: (resolved: ResolvedHosts) => this.useAddresses(resolved),
      resolve: (list: string) => resolveHosts(list, this.hostNames),
      refused: (client: NativeClient, rc: number) => this.refused(client, zkError(rc, 'getConfig', '/zookeeper/config')),
    };
    this.tracker = new EnsembleTracker(settings.connectionString, host, followEnsembleConfig, settings.tlsFiles !== undefined);
  }

  /** The connection's own request (the ensemble config's watch) was refused: without authentication, the session ends. */
  private refused(client: NativeClient, error: ZkError): void {
    const ended = endOfSession(error);
    const session = this.slot.current;
    if (ended?.refusal && session && session.client === client) this.declareLost(session, ended.detail, ended.end, ended.refusal);
  }

  /** Closing: no more reopening; the session ends, then its handle is closed (ZooKeeper deletes its ephemeral nodes at once). */
  shutDown(session: ZkSession | undefined): void {
    const client = this.stopHandles();
    this.closer.stop();
    this.slot.endClosed(session);
    client?.close();
  }

  /**
   * The first connect gave up (`detail` says why): a session it opened ends for whoever got it (its
   * `lost` aborts, `live` is cleared), its handle is closed, and nothing reopens until connect() again.
   */
  abandon(detail: string): void {
    const client = this.stopHandles();
    const session = this.slot.current;
    if (session && !session.lost.aborted) {
      session.markLost(detail, 'session-ended');
      this.slot.emit('lost', session.id);
    }
    client?.close();
  }

  /** No more timers, config watch or handle: the handle that was in use, for the caller to close. */
  private stopHandles(): NativeClient | undefined {
    this.clearLostTimer();
    clearTimeout(this.reopenTimer);
    this.tracker.stop();
    const client = this.client;
    this.client = undefined;
    return client;
  }

  /** Opens a native handle: for a new session, or to go on with `resume` (see moveSession). */
  open(resume?: { session: ZkSession; password: string }): NativeClient {
    const { client, config } = createNative(this.settings, this.resolved, this.hostNames, resume);
    let session: ZkSession | undefined = resume?.session;
    client.on('connect', () => {
      if (this.client !== client) return;
      this.start.connected(client);
      this.tracker.connected(client);
      if (!session) {
        this.refusal = undefined;
        const timeoutMs = client.native.timeout;
        const leaseMs = timeoutMs - (this.settings.leaseMarginMs ?? timeoutMs * DEFAULT_LEASE_MARGIN_SHARE);
        session = new ZkSession(client, timeoutMs, leaseMs, this.declareLost.bind(this), this.moveSession.bind(this), this.watermark);
        this.slot.open(session);
      } else if (!session.connected) {
        this.clearLostTimer();
        session.setConnected(true);
        this.slot.emit('reconnected', session.id);
      }
    });
    client.on('connecting', () => {
      if (this.client !== client || !session || !session.connected) return;
      this.suspend(session);
    });
    let saslFailure: SaslFailure | undefined;
    client.on('sasl_failed', (_handle: unknown, failure: SaslFailure) => (saslFailure = failure));
    client.on('close', (_client: unknown, code: number) => {
      if (this.client !== client) return; // closed on purpose
      const { saslOptions } = this.settings;
      if (saslFailure && saslOptions) return this.saslFailed(session, saslError(this.settings.connectionString, saslOptions, saslFailure));
      const { detail, end } = describeClose(code);
      if (session) this.declareLost(session, detail, end);
      else this.replaceHandle();
    });
    startNative(client, config, this.settings);
    return client;
  }

  /**
   * SASL failed on the current handle (closed by the binding): start-up fails at once; a session
   * that could not authenticate again is lost (its locks with it), and a new one is tried, after a
   * pause when the last try opened no session, so that refused credentials are not retried in a loop.
   */
  private saslFailed(session: ZkSession | undefined, error: ZkSaslError): void {
    if (this.start.failStart(error)) return;
    if (session && !session.lost.aborted) return this.declareLost(session, `it could not authenticate again: ${error.message}`, 'session-ended');
    this.client = undefined;
    clearTimeout(this.reopenTimer);
    this.reopenTimer = setTimeout(() => this.reopen(), REOPEN_RETRY_MS);
  }

  /** The session is disconnected: it is lost unless it is back within its timeout. */
  private suspend(session: ZkSession): void {
    session.setConnected(false);
    this.tracker.disconnected();
    this.clearLostTimer();
    this.lostTimer = setTimeout(
      () => this.declareLost(session, `disconnected for longer than the session timeout (${session.timeoutMs} ms)`, 'disconnected'),
      session.timeoutMs,
    );
    this.slot.emit('suspended', session.id);
  }

  /**
   * The C client dropped its socket inside a request (see SessionRequests.call). Its handle is closed
   * now, before the event loop polls again (and before a new handle can take the same descriptor
   * number), and the session goes on, disconnected, on a new handle that resumes it by id and
   * password: held locks stay held if it is back within its timeout, as on any reconnect.
   */
  private moveSession(session: ZkSession): void {
    if (this.slot.current !== session || session.lost.aborted || this.slot.closed) return;
    const old = this.client;
    const password = session.client.native.client_password; // read while its handle is open
    this.client = undefined; // the old handle's 'close' event is ours
    session.releaseHandle();
    old?.close();
    let next: NativeClient;
    try {
      next = this.open({ session, password });
    } catch {
      this.declareLost(session, 'its connection dropped and no new handle could be opened to resume it', 'session-ended');
      return;
    }
    session.adoptHandle(next);
    this.client = next;
    this.suspend(session);
  }

  private declareLost(session: ZkSession, detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void {
    if (session.lost.aborted || this.slot.current !== session) return;
    this.clearLostTimer();
    if (refusal) {
      // The servers will close the next session too unless their settings change: it is opened
      // after a pause, and callers meanwhile get the refusal (see ZkConnection.session()).
      this.refusal = refusal;
      const refused = this.client;
      this.client = undefined;
      session.markLost(detail, end, refusal);
      refused?.close();
      clearTimeout(this.reopenTimer);
      this.reopenTimer = setTimeout(() => this.reopen(), REOPEN_RETRY_MS);
      this.slot.emit('lost', session.id);
      return;
    }
    if (end === 'lease-expired' && this.client) {
      // The server may still keep the session: its handle is retired, to close it once that cannot
      // block (see SessionCloser), and the next one opened now.
      const credentials = { id: session.id, password: this.client.native.client_password };
      const retired = this.client;
      this.client = undefined;
      session.markLost(detail, end);
      this.closer.retire(retired, this.resolved.connect, credentials, session.timeoutMs);
      this.reopen();
    } else {
      session.markLost(detail, end);
      this.replaceHandle();
    }
    this.slot.emit('lost', session.id);
  }

  /**
   * Closes the current handle and opens the next one. Opening can fail (the servers' names do not
   * resolve during an outage): then it is retried every second while session() callers keep waiting.
   */
  private replaceHandle(): void {
    const old = this.client;
    this.client = undefined;
    old?.close();
    this.reopen();
  }

  /** Looks the names up again (off the event loop), then opens a handle for a new session. */
  private reopen(): void {
    if (!this.wantsHandle() || this.reopening) return;
    this.reopening = true;
    resolveHosts(this.tracker.connectString, this.hostNames).then(
      (resolved) => {
        this.reopening = false;
        this.resolved = resolved;
        if (!this.wantsHandle()) return;
        try {
          this.client = this.open();
        } catch {
          this.reopenTimer = setTimeout(() => this.reopen(), REOPEN_RETRY_MS);
        }
      },
      () => {
        // The names do not resolve now (an outage): try again, while session() callers wait.
        this.reopening = false;
        this.reopenTimer = setTimeout(() => this.reopen(), REOPEN_RETRY_MS);
      },
    );
  }

  /**
   * The member list changed (the tracker read a new ensemble config, or its names now resolve to other
   * addresses): the current handle is moved to it, and later handles start from it. When the C client
   * drops its connection for it (its server left the list), the session goes on from a new handle, as
   * after a failed send (see moveSession).
   */
  private useAddresses(resolved: ResolvedHosts): void {
    const hostsOf = (list: string): string[] => parseConnectString(list).hosts.map((host) => host.entry);
    if (this.slot.closed || sameHosts(hostsOf(resolved.connect), hostsOf(this.resolved.connect))) return;
    this.resolved = resolved;
    const client = this.client;
    const session = this.slot.current;
    if (!client) return;
    const wasConnected = session !== undefined && session.connected && session.client === client;
    // The names the new addresses were looked up from, before the C client may connect to one.
    if (this.settings.tlsFiles) client.native.tls_names(resolved.names);
    client.native.set_servers(hostsOf(shuffleHosts(resolved.connect)).join(','));
    if (wasConnected && client.native.state === SOCKET_DROPPED_STATE) this.moveSession(session);
  }

  /** A new handle is wanted: none is open, connect() was called and has not failed, and close() was not. */
  private wantsHandle(): boolean {
    return !this.slot.closed && this.slot.started && !this.client;
  }

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
  }
}

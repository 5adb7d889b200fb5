import { InvalidOptionsError, type LockLossReason, ZkConnectionError, ZkNativeAddonError, ZkSaslError, ZkTlsError } from '../errors.js';
import { checkMs } from '../shared/durations.js';
import { CLIENT_LOG_LEVELS, type ClientLogLevel, loadNativeModule, type NativeClient, SOCKET_DROPPED_STATE } from './native-client.js';
import { SessionSlot } from './session-slot.js';
import { validateDigest } from './zk-acl.js';
import type { ConnectionState, ConnectionStateListener, ZkConnectionLike } from './zk-connection-like.js';
import type { ZkSessionApi } from './zk-session-api.js';
import { lookUpWithin, parseConnectString, type ResolvedHosts, resolveHosts, shuffleHosts, unresolved, validateConnectionString } from './connect-string.js';
import { sameHosts } from './ensemble-config.js';
import { EnsembleTracker } from './ensemble-tracker.js';
import { SessionCloser } from './session-closer.js';
import { describeClose, endOfSession, type ZkError, zkError, type ZkSessionAuthError } from './zk-errors.js';
import { ZkSession } from './zk-session.js';
import { ZxidWatermark } from './zxid-watermark.js';
import { type CheckedTls, checkTls } from './zk-tls.options.js';
import { type CheckedSasl, checkSasl, nativeSasl } from './zk-sasl.options.js';
import { type SaslFailure, saslError, saslRequiredError, SESSION_REQUIRES_SASL } from './zk-sasl-failure.js';
import { tlsFailureOf } from './zk-tls-probe.js';
import {
  checkLeaseMargin,
  checkSessionTimeout,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_LEASE_MARGIN_SHARE,
  grantedLeaseError,
  refuseUnknownConnectionOptions,
  type ZkConnectionOptions,
} from './zk-connection.options.js';

/** Far more empty polls than any outage produces: the binding's own give-up never fires. */
const NEVER_GIVE_UP = 2_000_000_000;
const REOPEN_RETRY_MS = 1000;

/**
 * Owns the native handles. The C client notices an expired session only once it reconnects, so this
 * class declares a session lost itself after it has been disconnected for the negotiated session
 * timeout, tells everyone through the session's `lost` signal, closes that handle and opens a fresh
 * session for new work.
 */
export class ZkConnection implements ZkConnectionLike {
  readonly connectionString: string;
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The lease margin asked for, in ms; undefined: the default share of each session's timeout. */
  readonly leaseMarginMs: number | undefined;
  readonly clientLogLevel: ClientLogLevel;
  /** The digest credential, if any (never logged). */
  readonly digest: string | undefined;
  /** The TLS files, checked (undefined: plain TCP). */
  private readonly tlsFiles: CheckedTls | undefined;
  /** The SASL option, checked (undefined: no SASL). */
  private readonly saslOptions: CheckedSasl | undefined;
  /** The name each server address was looked up from (GSSAPI names servers by name). */
  private readonly hostNames = new Map<string, string>();
  /** While the first connect waits: fails it (a SASL failure needs no retry to be told). */
  private failStart: ((error: ZkSaslError) => void) | undefined;
  /** The answer to the first session's first request, without SASL (see saslNotRequired). */
  private saslProbe: Promise<number> | undefined;
  private client: NativeClient | undefined;
  /** Outlives sessions: a restored server is met by a new session (see ZxidWatermark). */
  private readonly watermark = new ZxidWatermark();
  /** Closes sessions given up on when their lease ran out, should the server still keep them. */
  private readonly closer = new SessionCloser();
  private lostTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** The connect string with its names looked up, for the current session (see connect-string.ts). */
  private resolved: ResolvedHosts;
  /** A new handle is on its way (its names being looked up). */
  private reopening = false;
  private connecting: Promise<void> | undefined;
  /**
   * The servers ended the last session for want of authentication: session() callers get this at
   * once, rather than wait for sessions the servers would close too, until a new session connects.
   */
  private refusal: ZkSessionAuthError | undefined;
  /** The current session, the state and its listeners. */
  private readonly slot: SessionSlot<ZkSession>;
  /** The member list in use: the configured one until the ensemble's config names another. */
  private readonly tracker: EnsembleTracker;

  constructor(options: ZkConnectionOptions) {
    if (options !== null && typeof options === 'object') refuseUnknownConnectionOptions(options);
    const connectionString = validateConnectionString(options.connectionString);
    this.slot = new SessionSlot(connectionString, (session) => this.shutDown(session));
    this.connectionString = connectionString;
    this.resolved = unresolved(this.connectionString);
    this.sessionTimeoutMs = checkSessionTimeout(options.sessionTimeoutMs);
    this.leaseMarginMs = checkLeaseMargin(options.leaseMarginMs, this.sessionTimeoutMs);
    this.connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs', { minExclusive: true }) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.clientLogLevel = options.clientLogLevel ?? 'off';
    this.digest = options.digest === undefined ? undefined : validateDigest(options.digest);
    this.tlsFiles = checkTls(options.tls);
    this.saslOptions = checkSasl(options.sasl);
    const connection = this;
    this.tracker = new EnsembleTracker(
      connectionString,
      {
        get client() {
          return connection.client;
        },
        useAddresses: (resolved) => this.useAddresses(resolved),
        resolve: (list) => resolveHosts(list, this.hostNames),
        refused: (client, rc) => this.refused(client, zkError(rc, 'getConfig', '/zookeeper/config')),
      },
      options.followEnsembleConfig !== false,
      this.tlsFiles !== undefined,
    );
    if (!(this.clientLogLevel in CLIENT_LOG_LEVELS)) {
      throw new InvalidOptionsError('clientLogLevel', `must be one of ${Object.keys(CLIENT_LOG_LEVELS).join(', ')}`);
    }
  }

  /** What talks to the server: always this package's native addon (see native-client.ts). */
  get addon(): 'nestjs-zk-lock' {
    return 'nestjs-zk-lock';
  }

  /** Whether the connection uses TLS (the `tls` option). */
  get tls(): boolean {
    return this.tlsFiles !== undefined;
  }

  /**
   * A request the connection makes itself (the ensemble config's watch, the first of each
   * connection) was refused: for want of authentication, the session ends as it would for a lock's.
   */
  private refused(client: NativeClient, error: ZkError): void {
    const ended = endOfSession(error);
    const session = this.slot.current;
    if (ended?.refusal && session && session.client === client) this.declareLost(session, ended.detail, ended.end, ended.refusal);
  }

  /** The SASL mechanism and the names the servers may give this identity in `sasl` ACLs (the `sasl` option), or undefined. */
  get sasl(): { readonly mechanism: string; readonly names: readonly string[] } | undefined {
    return this.saslOptions && { mechanism: this.saslOptions.mechanism, names: this.saslOptions.names };
  }

  /** Negotiated session timeout of the current session, in ms. */
  get negotiatedSessionTimeoutMs(): number | undefined {
    return this.slot.current?.timeoutMs;
  }

  /**
   * The servers this connection uses now, `host:port` as named: those of connectionString until the
   * ensemble's config names others (see followEnsembleConfig), with that config's version (hex).
   */
  get ensemble(): { members: string[]; configVersion: string | undefined } {
    return { members: this.tracker.hosts, configVersion: this.tracker.configVersion };
  }

  /**
   * The member the session is connected to now, `address:port` (the address the C client reached it
   * at, an IPv6 one in brackets); undefined while disconnected.
   */
  get currentServer(): string | undefined {
    if (!this.slot.current?.connected) return undefined;
    return this.client?.native.current_server ?? undefined;
  }

  /** The state of the current session, or `closed`. */
  get state(): ConnectionState | 'connecting' {
    return this.slot.state;
  }

  /** The current session's id (hex), or undefined before the first connect. */
  get sessionId(): string | undefined {
    return this.slot.sessionId;
  }

  /** Listens to state changes; returns the function that stops listening. */
  onStateChange(listener: ConnectionStateListener): () => void {
    return this.slot.onStateChange(listener);
  }

  /**
   * The current live session, waiting for one while a new session is being opened; while the
   * servers refuse sessions for want of authentication, that refusal. @internal
   */
  session(signal?: AbortSignal): Promise<ZkSessionApi> {
    const current = this.slot.current;
    if (current && !current.lost.aborted) return Promise.resolve(current); // every acquire: one call
    if (this.refusal) return Promise.reject(this.refusal);
    return this.slot.session(signal);
  }

  /** Ends the session (its ephemeral nodes, so its locks, go at once) and opens no other. */
  close(): void {
    this.slot.close();
  }

  /**
   * The current session's id and password (hex), for the testing kit's expireSession: a secret,
   * kept out of the published types. @internal
   */
  sessionCredentials(): { id: string; password: string } | undefined {
    const session = this.slot.current;
    if (!session || session.lost.aborted) return undefined;
    return { id: session.id, password: session.client.native.client_password };
  }

  /**
   * Opens the first session. Resolves once connected.
   * @throws ZkConnectionError when no server answers within connectTimeoutMs, or the string is unusable.
   */
  connect(): Promise<void> {
    if (this.slot.closed) return Promise.reject(this.slot.closedError());
    this.connecting ??= this.firstConnect();
    return this.connecting;
  }

  /** Closing: no more reopening; the session ends, then its handle is closed (ZooKeeper deletes its ephemeral nodes at once). */
  private shutDown(session: ZkSession | undefined): void {
    this.clearLostTimer();
    this.closer.stop();
    this.tracker.stop();
    clearTimeout(this.reopenTimer);
    const client = this.client;
    this.client = undefined;
    this.slot.endClosed(session);
    client?.close();
  }

  private async firstConnect(): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.connectTimeoutMs);
    try {
      this.resolved = await lookUpWithin(this.connectionString, timeout.signal, this.connectTimeoutMs, this.hostNames);
      if (this.slot.closed) throw this.slot.closedError();
      this.client = this.openHandle();
      this.slot.started = true;
    } catch (error) {
      clearTimeout(timer);
      this.connecting = undefined;
      throw error;
    }
    // The C client retries a failed TLS handshake forever and says nothing: a handshake of our own
    // tells a misconfiguration (or a TLS port reached without tls) from a slow server, in time.
    const probes = new AbortController();
    const tlsFailure = tlsFailureOf(this.connectionString, this.resolved, this.tlsFiles, this.connectTimeoutMs, probes.signal);
    const saslFailure = new Promise<never>((_, reject) => (this.failStart = reject));
    try {
      const session = await Promise.race([this.session(timeout.signal).then((opened) => this.saslNotRequired(opened as ZkSession, timeout.signal)), tlsFailure, saslFailure]);
      const refused = grantedLeaseError(this.leaseMarginMs, (session as ZkSession).timeoutMs, this.sessionTimeoutMs);
      if (refused) {
        this.close();
        throw refused;
      }
    } catch (error) {
      if (this.slot.closed) throw error;
      const client = this.client;
      this.client = undefined;
      client?.close();
      this.connecting = undefined;
      this.slot.started = false;
      if (error instanceof ZkTlsError || error instanceof ZkSaslError) throw error;
      throw new ZkConnectionError(
        this.connectionString,
        `no server answered within ${this.connectTimeoutMs} ms` +
          (this.saslOptions ? ' (with SASL: a server with no JAAS Server section drops the connection at the first SASL message)' : ''),
      );
    } finally {
      clearTimeout(timer);
      probes.abort();
      this.failStart = undefined;
      this.saslProbe = undefined;
    }
  }

  /**
   * Without SASL, a server that requires it still opens the session, and answers the first request
   * with ZSESSIONCLOSEDREQUIRESASLAUTH, then drops the connection (and every request after it): the
   * first session's first request is an exists (it needs no permission), sent as it connects (see
   * probeSaslRequired), so that start-up fails instead of the first lock.
   */
  private async saslNotRequired(session: ZkSession, signal: AbortSignal): Promise<ZkSession> {
    if (!this.saslProbe) return session;
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    if ((await Promise.race([this.saslProbe, aborted])) === SESSION_REQUIRES_SASL) throw saslRequiredError(this.connectionString);
    return session;
  }

  /** The first session without SASL just connected: its first request asks whether the server requires SASL. */
  private probeSaslRequired(client: NativeClient): void {
    if (this.saslOptions || !this.failStart || this.saslProbe) return;
    this.saslProbe = new Promise<number>((answered) => {
      try {
        if (client.native.a_exists('/', false, (rc) => answered(rc)) !== 0) answered(0);
      } catch {
        answered(0);
      }
    });
  }

  /** Opens a native handle: for a new session, or to go on with `resume` (see moveSession). */
  private openHandle(resume?: { session: ZkSession; password: string }): NativeClient {
    const Native = loadNativeModule();
    const config = {
      ...(resume && { client_id: resume.session.id, client_password: resume.password }),
      // Asked to pick servers in random order, the C client shuffles its host list again on every
      // readiness check, reading /dev/urandom each time (three system calls per request). Shuffled
      // once per handle here instead, the clients spread over the servers just the same.
      connect: shuffleHosts(this.resolved.connect),
      timeout: this.sessionTimeoutMs,
      debug_level: CLIENT_LOG_LEVELS[this.clientLogLevel],
      host_order_deterministic: true,
      // The binding closes a handle as if its session had expired once the C client has had nothing
      // to process ten times in a row, which is what reconnecting looks like while one server of the
      // connect string is down: live sessions were declared expired and fresh handles never got to
      // the servers that were up. Session loss is this class's decision (see the lost timer).
      response_counter_limit: NEVER_GIVE_UP,
      // zookeeper_init_ssl's "ca,cert,key,passphrase" (checked: no commas in the parts).
      ...(this.tlsFiles && { cert: this.tlsFiles.initString, tls_names: [...this.resolved.names], tls_any_name: !this.tlsFiles.verifyHostname }),
      ...(this.saslOptions && { sasl: nativeSasl(this.saslOptions, this.hostNames) }),
    };
    const client = new Native(config);
    let session: ZkSession | undefined = resume?.session;
    client.on('connect', () => {
      if (this.client !== client) return;
      this.probeSaslRequired(client);
      this.tracker.connected(client);
      if (!session) {
        this.refusal = undefined;
        const timeoutMs = client.native.timeout;
        session = new ZkSession(
          client,
          timeoutMs,
          timeoutMs - (this.leaseMarginMs ?? timeoutMs * DEFAULT_LEASE_MARGIN_SHARE),
          (ended, detail, end, refusal) => this.declareLost(ended, detail, end, refusal),
          (dropped) => this.moveSession(dropped),
          this.watermark,
        );
        this.slot.current = session;
        this.slot.wakeSessionWaiters();
        this.slot.emit('connected', session.id);
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
      if (saslFailure && this.saslOptions) return this.saslFailed(session, saslError(this.connectionString, this.saslOptions, saslFailure));
      const { detail, end } = describeClose(code);
      if (session) this.declareLost(session, detail, end);
      else this.replaceHandle();
    });
    let started: unknown;
    try {
      started = client.native.init(config);
    } catch (error) {
      if (!config.cert) throw error;
      throw new ZkNativeAddonError(
        `it was built without TLS, which the tls option needs (${(error as Error).message}; native/c-client/nestjs-zk-lock-build.json says why: ` +
          'this Node.js had no OpenSSL headers in include/node/openssl, or the C client sources were not the ones the install script can make ' +
          'non-blocking). Rebuild it with `npm rebuild nestjs-zk-lock` under a Node.js that has them (the official builds do)',
      );
    }
    if (started instanceof Error) {
      throw new ZkConnectionError(this.connectionString, `the ZooKeeper client refused it (${started.message})`, {
        cause: started,
      });
    }
    // Queued by the C client ahead of every request, and sent again after each reconnect. A digest
    // is never refused: a wrong password is merely another identity, which the ACLs then refuse.
    if (this.digest) client.native.add_auth('digest', this.digest, () => undefined);
    return client;
  }

  /**
   * SASL failed on the current handle (closed by the binding): start-up fails at once; a session
   * that could not authenticate again is lost (its locks with it), and a new one is tried, after a
   * pause when the last try opened no session, so that refused credentials are not retried in a loop.
   */
  private saslFailed(session: ZkSession | undefined, error: ZkSaslError): void {
    if (this.failStart) return this.failStart(error);
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
   * The C client dropped its socket inside a request (see ZkSession.call). Its handle is closed now,
   * before the event loop polls again (and before a new handle can take the same descriptor number),
   * and the session goes on, disconnected, on a new handle that resumes it by id and password: held
   * locks stay held if it is back within its timeout, as on any reconnect.
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
      next = this.openHandle({ session, password });
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
      // after a pause, and callers meanwhile get the refusal (see session()).
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
    if (this.slot.closed || this.client || this.reopening) return;
    this.reopening = true;
    resolveHosts(this.tracker.connectString, this.hostNames).then(
      (resolved) => {
        this.reopening = false;
        this.resolved = resolved;
        if (this.slot.closed || this.client) return;
        try {
          this.client = this.openHandle();
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
    if (this.tlsFiles) client.native.tls_names(resolved.names);
    client.native.set_servers(hostsOf(shuffleHosts(resolved.connect)).join(','));
    if (wasConnected && client.native.state === SOCKET_DROPPED_STATE) this.moveSession(session);
  }

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
  }
}

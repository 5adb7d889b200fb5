import { InvalidOptionsError, ZkConnectionError, ZkSaslError, ZkTlsError } from '../errors.js';
import { checkMs } from '../shared/durations.js';
import { CLIENT_LOG_LEVELS, type ClientLogLevel, type NativeClient } from './native-handle.js';
import { SessionHandles } from './session-handles.js';
import { SessionSlot } from './session-slot.js';
import { validateDigest } from './zk-acl.js';
import type { ConnectionState, ConnectionStateListener, ZkConnectionLike } from './zk-connection-like.js';
import type { ZkSessionApi } from './zk-session-api.js';
import { lookUpWithin, validateConnectionString } from './connect-string.js';
import type { ZkSession } from './zk-session.js';
import { type CheckedTls, checkTls } from './zk-tls.options.js';
import { type CheckedSasl, checkSasl } from './zk-sasl.options.js';
import { saslRequiredError, SESSION_REQUIRES_SASL } from './zk-sasl-failure.js';
import { tlsFailureOf } from './zk-tls-probe.js';
import { ZK_CODES } from './zk-codes.js';
import {
  checkLeaseMargin,
  checkSessionTimeout,
  DEFAULT_CONNECT_TIMEOUT_MS,
  grantedLeaseError,
  refuseUnknownConnectionOptions,
  type ZkConnectionOptions,
} from './zk-connection.options.js';

/**
 * One ZooKeeper connection: its options, its state, and the current session, which it hands to the
 * recipes. It owns the native handles (SessionHandles): a session disconnected for longer than its
 * timeout is declared lost, everyone hears it through the session's `lost` signal, and a fresh
 * session is opened for new work.
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
  /** While the first connect waits: fails it (a SASL failure needs no retry to be told). */
  private failStart: ((error: ZkSaslError) => void) | undefined;
  /** The answer to the first session's first request, without SASL (see saslNotRequired). */
  private saslProbe: Promise<number> | undefined;
  private connecting: Promise<void> | undefined;
  /** The current session, the state and its listeners. */
  private readonly slot: SessionSlot<ZkSession>;
  /** The native handles, the sessions' ends and the member list in use. */
  private readonly handles: SessionHandles;
  /**
   * The current session while it is live (see SessionSource.live): kept by the slot; undefined
   * while a session is on its way, while the servers refuse sessions, and once closed. @internal
   */
  readonly live: ZkSessionApi | undefined = undefined;

  constructor(options: ZkConnectionOptions) {
    if (options !== null && typeof options === 'object') refuseUnknownConnectionOptions(options);
    const connectionString = validateConnectionString(options.connectionString);
    this.slot = new SessionSlot(connectionString, (session) => this.handles.shutDown(session), this);
    this.connectionString = connectionString;
    this.sessionTimeoutMs = checkSessionTimeout(options.sessionTimeoutMs);
    this.leaseMarginMs = checkLeaseMargin(options.leaseMarginMs, this.sessionTimeoutMs);
    this.connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs', { minExclusive: true }) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.clientLogLevel = options.clientLogLevel ?? 'off';
    this.digest = options.digest === undefined ? undefined : validateDigest(options.digest);
    this.tlsFiles = checkTls(options.tls);
    this.saslOptions = checkSasl(options.sasl);
    const { leaseMarginMs, clientLogLevel, digest, tlsFiles, saslOptions } = this;
    this.handles = new SessionHandles(
      { connectionString, sessionTimeoutMs: this.sessionTimeoutMs, leaseMarginMs, clientLogLevel, digest, tlsFiles, saslOptions },
      this.slot,
      {
        connected: (client) => this.probeSaslRequired(client),
        failStart: (error) => {
          if (!this.failStart) return false;
          this.failStart(error);
          return true;
        },
      },
      options.followEnsembleConfig !== false,
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
    return { members: this.handles.tracker.hosts, configVersion: this.handles.tracker.configVersion };
  }

  /**
   * The member the session is connected to now, `address:port` (the address the C client reached it
   * at, an IPv6 one in brackets); undefined while disconnected.
   */
  get currentServer(): string | undefined {
    if (!this.slot.current?.connected) return undefined;
    return this.handles.client?.native.current_server ?? undefined;
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
   * servers refuse sessions for want of authentication, that refusal; after a failed connect(), its
   * error. Callers that run per acquire read `live` first, and come here only when it is undefined
   * or lost. @internal
   */
  session(signal?: AbortSignal): Promise<ZkSessionApi> {
    const current = this.slot.current;
    if (current && !current.lost.aborted) return Promise.resolve(current);
    // After a failed connect() or close(), the slot's error says what happened; the refusal is for sessions on their way.
    if (this.handles.refusal && this.slot.started && !this.slot.closed) return Promise.reject(this.handles.refusal);
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

  private async firstConnect(): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.connectTimeoutMs);
    const { handles } = this;
    try {
      handles.resolved = await lookUpWithin(this.connectionString, timeout.signal, this.connectTimeoutMs, handles.hostNames);
      if (this.slot.closed) throw this.slot.closedError();
      handles.client = handles.open();
      this.slot.started = true;
    } catch (error) {
      clearTimeout(timer);
      this.connecting = undefined;
      if (error instanceof Error && !this.slot.closed) this.slot.startFailed(error);
      throw error;
    }
    // The C client retries a failed TLS handshake forever and says nothing: a handshake of our own
    // tells a misconfiguration (or a TLS port reached without tls) from a slow server, in time.
    const probes = new AbortController();
    const tlsFailure = tlsFailureOf(this.connectionString, handles.resolved, this.tlsFiles, this.connectTimeoutMs, probes.signal);
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
      const failure =
        error instanceof ZkTlsError || error instanceof ZkSaslError
          ? error
          : new ZkConnectionError(
              this.connectionString,
              `no server answered within ${this.connectTimeoutMs} ms` +
                (this.saslOptions ? ' (with SASL: a server with no JAAS Server section drops the connection at the first SASL message)' : ''),
            );
      // Whoever got the session meanwhile (a session() call made during connect) hears it end, then
      // gets `failure` from session(), as does any later caller, until connect() is called again.
      this.connecting = undefined;
      this.slot.startFailed(failure);
      handles.abandon(`connect() failed and gave it up: ${failure.message}`);
      throw failure;
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

  /**
   * The first session without SASL just connected: its first request asks whether the server
   * requires SASL. The server may close the connection before its answer is sent: the question,
   * asked again while connect() waits, goes once the handle has reconnected.
   */
  private probeSaslRequired(client: NativeClient): void {
    if (this.saslOptions || !this.failStart || this.saslProbe) return;
    this.saslProbe = new Promise<number>((answered) => {
      const ask = (): void => {
        try {
          const sent = client.native.a_exists('/', false, (rc) => (rc === ZK_CODES.CONNECTIONLOSS && this.failStart && this.handles.client === client ? ask() : answered(rc)));
          if (sent !== 0) answered(0);
        } catch {
          answered(0);
        }
      };
      ask();
    });
  }
}

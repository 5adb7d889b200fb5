import { InvalidOptionsError, type LockLossReason, ZkConnectionError, ZkNativeAddonError, ZkTlsError } from '../errors.js';
import { checkMs } from '../shared/durations.js';
import { CLIENT_LOG_LEVELS, type ClientLogLevel, loadNativeModule, type NativeClient } from './native-client.js';
import { ConnectionBase } from './connection-base.js';
import { validateDigest } from './zk-acl.js';
import type { ZkConnectionLike } from './zk-connection-like.js';
import { lookUpWithin, type ResolvedHosts, resolveHosts, shuffleHosts, unresolved, validateConnectionString } from './connect-string.js';
import { SessionCloser } from './session-closer.js';
import { describeClose } from './zk-errors.js';
import { ZkSession } from './zk-session.js';
import { ZxidWatermark } from './zxid-watermark.js';
import { type CheckedTls, checkTls } from './zk-tls.options.js';
import { tlsFailureOf } from './zk-tls-probe.js';
import {
  checkLeaseMargin,
  checkSessionTimeout,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_LEASE_MARGIN_SHARE,
  grantedLeaseError,
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
export class ZkConnection extends ConnectionBase<ZkSession> implements ZkConnectionLike {
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

  constructor(options: ZkConnectionOptions) {
    const connectionString = validateConnectionString(options.connectionString);
    super(connectionString);
    this.connectionString = connectionString;
    this.resolved = unresolved(this.connectionString);
    this.sessionTimeoutMs = checkSessionTimeout(options.sessionTimeoutMs);
    this.leaseMarginMs = checkLeaseMargin(options.leaseMarginMs, this.sessionTimeoutMs);
    this.connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs', { minExclusive: true }) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.clientLogLevel = options.clientLogLevel ?? 'off';
    this.digest = options.digest === undefined ? undefined : validateDigest(options.digest);
    this.tlsFiles = checkTls(options.tls);
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

  /** Negotiated session timeout of the current session, in ms. */
  get negotiatedSessionTimeoutMs(): number | undefined {
    return this.current?.timeoutMs;
  }

  /**
   * The current session's id and password (hex). A test kit uses them to expire the session on
   * purpose; treat the password as a secret.
   */
  sessionCredentials(): { id: string; password: string } | undefined {
    const session = this.current;
    if (!session || session.lost.aborted) return undefined;
    return { id: session.id, password: session.client.native.client_password };
  }

  /**
   * Opens the first session. Resolves once connected.
   * @throws ZkConnectionError when no server answers within connectTimeoutMs, or the string is unusable.
   */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    this.connecting ??= this.firstConnect();
    return this.connecting;
  }

  /** Closing: no more reopening; the session ends, then its handle is closed (ZooKeeper deletes its ephemeral nodes at once). */
  protected shutDown(session: ZkSession | undefined): void {
    this.clearLostTimer();
    this.closer.stop();
    clearTimeout(this.reopenTimer);
    const client = this.client;
    this.client = undefined;
    this.endClosed(session);
    client?.close();
  }

  private async firstConnect(): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.connectTimeoutMs);
    try {
      this.resolved = await lookUpWithin(this.connectionString, timeout.signal, this.connectTimeoutMs);
      if (this.closed) throw this.closedError();
      this.client = this.openHandle();
      this.started = true;
    } catch (error) {
      clearTimeout(timer);
      this.connecting = undefined;
      throw error;
    }
    // The C client retries a failed TLS handshake forever and says nothing: a handshake of our own
    // tells a misconfiguration (or a TLS port reached without tls) from a slow server, in time.
    const probes = new AbortController();
    const tlsFailure = tlsFailureOf(this.connectionString, this.resolved, this.tlsFiles, this.connectTimeoutMs, probes.signal);
    try {
      const session = await Promise.race([this.session(timeout.signal), tlsFailure]);
      const refused = grantedLeaseError(this.leaseMarginMs, (session as ZkSession).timeoutMs, this.sessionTimeoutMs);
      if (refused) {
        this.close();
        throw refused;
      }
    } catch (error) {
      if (this.closed) throw error;
      const client = this.client;
      this.client = undefined;
      client?.close();
      this.connecting = undefined;
      this.started = false;
      if (error instanceof ZkTlsError) throw error;
      throw new ZkConnectionError(this.connectionString, `no server answered within ${this.connectTimeoutMs} ms`);
    } finally {
      clearTimeout(timer);
      probes.abort();
    }
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
    };
    const client = new Native(config);
    let session: ZkSession | undefined = resume?.session;
    client.on('connect', () => {
      if (this.client !== client) return;
      if (!session) {
        const timeoutMs = client.native.timeout;
        session = new ZkSession(
          client,
          timeoutMs,
          timeoutMs - (this.leaseMarginMs ?? timeoutMs * DEFAULT_LEASE_MARGIN_SHARE),
          (ended, detail, end) => this.declareLost(ended, detail, end),
          (dropped) => this.moveSession(dropped),
          this.watermark,
        );
        this.current = session;
        this.wakeSessionWaiters();
        this.emit('connected', session.id);
      } else if (!session.connected) {
        this.clearLostTimer();
        session.setConnected(true);
        this.emit('reconnected', session.id);
      }
    });
    client.on('connecting', () => {
      if (this.client !== client || !session || !session.connected) return;
      this.suspend(session);
    });
    client.on('close', (_client: unknown, code: number) => {
      if (this.client !== client) return; // closed on purpose
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

  /** The session is disconnected: it is lost unless it is back within its timeout. */
  private suspend(session: ZkSession): void {
    session.setConnected(false);
    this.clearLostTimer();
    this.lostTimer = setTimeout(
      () => this.declareLost(session, `disconnected for longer than the session timeout (${session.timeoutMs} ms)`, 'disconnected'),
      session.timeoutMs,
    );
    this.emit('suspended', session.id);
  }

  /**
   * The C client dropped its socket inside a request (see ZkSession.call). Its handle is closed now,
   * before the event loop polls again (and before a new handle can take the same descriptor number),
   * and the session goes on, disconnected, on a new handle that resumes it by id and password: held
   * locks stay held if it is back within its timeout, as on any reconnect.
   */
  private moveSession(session: ZkSession): void {
    if (this.current !== session || session.lost.aborted || this.closed) return;
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

  private declareLost(session: ZkSession, detail: string, end: LockLossReason): void {
    if (session.lost.aborted || this.current !== session) return;
    this.clearLostTimer();
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
    this.emit('lost', session.id);
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
    if (this.closed || this.client || this.reopening) return;
    this.reopening = true;
    resolveHosts(this.connectionString).then(
      (resolved) => {
        this.reopening = false;
        this.resolved = resolved;
        if (this.closed || this.client) return;
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

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
  }
}

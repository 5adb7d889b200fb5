import { InvalidOptionsError, ZkConnectionError, ZkNativeAddonError, ZkTlsError } from '../errors.js';
import { CLIENT_LOG_LEVELS, type ClientLogLevel, loadNativeModule, type NativeClient } from './native-client.js';
import { waitInSet } from '../shared/promises.js';
import { validateDigest } from './zk-acl.js';
import type { SessionLifecycle } from './session-lifecycle.js';
import type { ConnectionState, ConnectionStateListener, ZkLockConnection } from './zk-lock-connection.js';
import { checkMs } from '../shared/durations.js';
import { lookUpWithin, parseConnectString, resolveHosts, shuffleHosts, validateConnectionString } from './connect-string.js';
import { SessionCloser } from './session-closer.js';
import type { SessionEnd } from './zk-errors.js';
import { ZkSession } from './zk-session.js';
import type { ZkSessionApi } from './zk-session-api.js';
import { ZxidWatermark } from './zxid-watermark.js';
import { type CheckedTls, checkTls, probeTls, TLS_ADVICE, type ZkTlsOptions } from './zk-tls.js';

/** Options of one ZooKeeper connection. */
export interface ZkConnectionOptions {
  /** Comma-separated `host:port` list, optionally followed by a chroot path: `zk1:2181,zk2:2181/app`. */
  connectionString: string;
  /**
   * Session timeout requested from the server, in ms; the server clamps it to its own
   * min/max (by default 2 and 20 ticks). Held locks are declared lost after this long disconnected.
   * @default 15000
   */
  sessionTimeoutMs?: number;
  /**
   * How much of the session timeout a holder gives up to be told of a lost lock before ZooKeeper
   * can have granted it to someone else, in ms. A holder's lease runs until the send time of its
   * session's latest answered request plus the session timeout less this margin; when it runs out
   * (no answer for that long: a partition, a stalled or dead server), every lock of the session is
   * declared lost and the session is ended. It must cover how late an ensemble's leader may hear of
   * the session: `syncLimit × tickTime + tickTime / 2`, plus a little for clock rates and timers
   * (a follower cut off from its leader answers for up to syncLimit ticks). The default covers
   * ZooKeeper's sample configuration (tickTime 2000, syncLimit 5) from a 15 s session timeout up,
   * and any ensemble whose `syncLimit × tickTime` is at most half the session timeout. A standalone
   * server needs only the little: its own answers prove the session alive. At most nine tenths of
   * the session timeout. While a lock is held or waited for, the lease is renewed by any answer,
   * the C client's pings included, and by a read of its own when nothing was answered for half the
   * lease; with a margin under a third of the session timeout the pings (every third of it) suffice
   * and no reads are sent.
   * @default three quarters of the negotiated session timeout
   */
  leaseMarginMs?: number;
  /**
   * How long `connect()` waits for the first session before failing, in ms.
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * What the C client prints to stderr (it cannot be routed to a logger). Process-wide: the last
   * connection opened sets it for all.
   * @default 'off'
   */
  clientLogLevel?: ClientLogLevel;
  /**
   * Digest credential, `user:password`, added to every session this connection opens (before any
   * other request). With it, the lock paths this library creates get an ACL that lets only this
   * identity create and delete lock nodes (everyone may read). ZooKeeper sends it in clear text:
   * use it on a trusted network or through a TLS tunnel.
   * @default undefined (no identity: lock paths are created open)
   */
  digest?: string;
  /**
   * TLS to the servers' `secureClientPort`: PEM file paths (no commas), checked at construction
   * (readable, parseable, key matching cert, passphrase right) with InvalidOptionsError. Start-up
   * fails with ZkTlsError, within connectTimeoutMs, when a server's certificate is not signed by
   * `ca`, a server refuses the client, or the port does not speak TLS (and, without this option,
   * when the port speaks TLS only). Needs an addon built with TLS (the default build; see README).
   * @default undefined (plain TCP)
   */
  tls?: ZkTlsOptions;
}

export const DEFAULT_SESSION_TIMEOUT_MS = 15_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** The default lease margin, as a share of the negotiated session timeout. */
export const DEFAULT_LEASE_MARGIN_SHARE = 0.75;
/** The shortest lease allowed, as a share of the session timeout: shorter, every lock would be lost at the first hiccup. */
const MIN_LEASE_SHARE = 0.1;
/**
 * Session timeouts the C client can work with. It gives a connect attempt two thirds of the timeout
 * asked for (at 1 ms it never connects; a server grants at least 2 ticks anyway), and doubles it in
 * an int (from 2^30 ms it never connects either).
 */
const MIN_SESSION_TIMEOUT_MS = 100;
const MAX_SESSION_TIMEOUT_MS = 2 ** 30 - 1;
/** Far more empty polls than any outage produces: the binding's own give-up never fires. */
const NEVER_GIVE_UP = 2_000_000_000;
const REOPEN_RETRY_MS = 1000;

/**
 * Owns the native handles. The C client notices an expired session only once it reconnects, so this
 * class declares a session lost itself after it has been disconnected for the negotiated session
 * timeout, tells everyone through the session's `lost` signal, closes that handle and opens a fresh
 * session for new work.
 */
export class ZkConnection implements ZkLockConnection {
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
  private current: ZkSession | undefined;
  /** Outlives sessions: a restored server is met by a new session (see ZxidWatermark). */
  private readonly watermark = new ZxidWatermark();
  /** Closes sessions given up on when their lease ran out, should the server still keep them. */
  private readonly closer = new SessionCloser();
  private sessionWaiters = new Set<() => void>();
  private readonly listeners = new Set<ConnectionStateListener>();
  private lostTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  /** The connect string with its names looked up, for the current session (see connect-string.ts). */
  private resolved: string;
  /** A new handle is on its way (its names being looked up). */
  private reopening = false;
  private closed = false;
  /** connect() opened a handle: from now on a session is always on its way until close(). */
  private started = false;
  private connecting: Promise<void> | undefined;

  constructor(options: ZkConnectionOptions) {
    this.connectionString = validateConnectionString(options.connectionString);
    this.resolved = this.connectionString;
    this.sessionTimeoutMs = sessionTimeout(options.sessionTimeoutMs);
    this.leaseMarginMs = leaseMargin(options.leaseMarginMs, this.sessionTimeoutMs);
    this.connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs', { minExclusive: true }) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.clientLogLevel = options.clientLogLevel ?? 'off';
    this.digest = options.digest === undefined ? undefined : validateDigest(options.digest);
    this.tlsFiles = checkTls(options.tls);
    if (!(this.clientLogLevel in CLIENT_LOG_LEVELS)) {
      throw new InvalidOptionsError('clientLogLevel', `must be one of ${Object.keys(CLIENT_LOG_LEVELS).join(', ')}`);
    }
  }

  /** The state of the current session, or `closed`. */
  get state(): ConnectionState | 'connecting' {
    return connectionStateOf(this.closed, this.current);
  }

  /** The current session's id (hex), or undefined before the first connect. */
  get sessionId(): string | undefined {
    return this.current?.id;
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

  onStateChange(listener: ConnectionStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens the first session. Resolves once connected.
   * @throws ZkConnectionError when no server answers within connectTimeoutMs, or the string is unusable.
   */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new ZkConnectionError(this.connectionString, 'the connection was closed'));
    this.connecting ??= this.firstConnect();
    return this.connecting;
  }

  /**
   * The current live session, waiting for one while a new session is being opened.
   * It may be suspended: callers wait with `whenConnected` before writing.
   */
  session(signal?: AbortSignal): Promise<ZkSessionApi> {
    const current = this.current;
    if (current && !current.lost.aborted) return Promise.resolve(current);
    if (this.closed) return Promise.reject(new ZkConnectionError(this.connectionString, 'the connection was closed'));
    if (!this.started) return Promise.reject(new ZkConnectionError(this.connectionString, 'connect() was not called'));
    return waitInSet(this.sessionWaiters, signal).then(() => this.session(signal));
  }

  /** Ends the session (ZooKeeper deletes its ephemeral nodes at once) and stops reconnecting. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearLostTimer();
    this.closer.stop();
    clearTimeout(this.reopenTimer);
    const client = this.client;
    this.client = undefined;
    this.current?.markLost('the connection was closed by the application', 'closed');
    client?.close();
    this.wakeSessionWaiters();
    this.emit('closed', this.current?.id ?? '');
  }

  private async firstConnect(): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.connectTimeoutMs);
    try {
      this.resolved = await lookUpWithin(this.connectionString, timeout.signal, this.connectTimeoutMs);
      if (this.closed) throw new ZkConnectionError(this.connectionString, 'the connection was closed');
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
    const tlsFailure = this.probeServers(probes.signal);
    try {
      const session = await Promise.race([this.session(timeout.signal), tlsFailure]);
      const granted = (session as ZkSession).timeoutMs;
      if (this.leaseMarginMs !== undefined && granted - this.leaseMarginMs < granted * MIN_LEASE_SHARE) {
        this.close();
        throw new InvalidOptionsError(
          'leaseMarginMs',
          `${this.leaseMarginMs} ms leaves less than a tenth of the session timeout the server granted (${granted} ms, asked ${this.sessionTimeoutMs} ms) ` +
            `as a lease: lower leaseMarginMs to at most ${Math.floor(granted * (1 - MIN_LEASE_SHARE))}, or let the server grant a longer session (its maxSessionTimeout)`,
        );
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

  /**
   * Rejects with ZkTlsError when a TLS probe of a server (see probeTls) finds a definite failure;
   * otherwise never settles. With `tls`, every server is probed at once; without, only if no session
   * is up after half the connect timeout, and only to ask whether the port speaks TLS only.
   */
  private probeServers(signal: AbortSignal): Promise<never> {
    return new Promise<never>((_, reject) => {
      const { hosts } = parseConnectString(this.resolved);
      const probeAll = (budgetMs: number): void => {
        for (const { host, port } of hosts) {
          void probeTls(host, port, this.tlsFiles, budgetMs, signal).then((result) => {
            if (result.outcome !== 'failed' || signal.aborted) return;
            const server = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
            reject(new ZkTlsError(this.connectionString, server, result.failure, result.detail, TLS_ADVICE[result.failure]));
          });
        }
      };
      if (this.tlsFiles) return probeAll(this.connectTimeoutMs);
      const later = setTimeout(() => probeAll(Math.max(1, this.connectTimeoutMs / 2)), this.connectTimeoutMs / 2);
      signal.addEventListener('abort', () => clearTimeout(later), { once: true });
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
      connect: shuffleHosts(this.resolved),
      timeout: this.sessionTimeoutMs,
      debug_level: CLIENT_LOG_LEVELS[this.clientLogLevel],
      host_order_deterministic: true,
      // The binding closes a handle as if its session had expired once the C client has had nothing
      // to process ten times in a row, which is what reconnecting looks like while one server of the
      // connect string is down: live sessions were declared expired and fresh handles never got to
      // the servers that were up. Session loss is this class's decision (see the lost timer).
      response_counter_limit: NEVER_GIVE_UP,
      // zookeeper_init_ssl's "ca,cert,key,passphrase" (checked: no commas in the parts).
      ...(this.tlsFiles && { cert: this.tlsFiles.initString }),
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
      const why = code === -112 ? 'the session expired' : code === -113 ? 'authentication failed' : `the client closed (${code})`;
      if (session) this.declareLost(session, why, code === -112 ? 'session-expired' : 'ended');
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
      this.declareLost(session, 'its connection dropped and no new handle could be opened to resume it', 'ended');
      return;
    }
    session.adoptHandle(next);
    this.client = next;
    this.suspend(session);
  }

  private declareLost(session: ZkSession, detail: string, end: SessionEnd): void {
    if (session.lost.aborted || this.current !== session) return;
    this.clearLostTimer();
    if (end === 'lease-expired' && this.client) {
      // The server may still keep the session: its handle is retired, to close it once that cannot
      // block (see SessionCloser), and the next one opened now.
      const credentials = { id: session.id, password: this.client.native.client_password };
      const retired = this.client;
      this.client = undefined;
      session.markLost(detail, end);
      this.closer.retire(retired, this.resolved, credentials, session.timeoutMs);
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

  private wakeSessionWaiters(): void {
    const waiters = this.sessionWaiters;
    this.sessionWaiters = new Set();
    for (const wake of waiters) wake();
  }

  private clearLostTimer(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
  }

  /** Listeners run after the state has changed; one that throws cannot stop the others or the state machine. */
  private emit(state: ConnectionState, sessionId: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(state, sessionId);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

/** A connection's state from whether it was closed and its current session (the native and the in-memory one). */
export function connectionStateOf(closed: boolean, current: SessionLifecycle | undefined): ConnectionState | 'connecting' {
  if (closed) return 'closed';
  if (!current || current.lost.aborted) return 'connecting';
  return current.connected ? 'connected' : 'suspended';
}

function sessionTimeout(value: unknown): number {
  const hint =
    'the ZooKeeper C client cannot connect outside that range, and the server grants a timeout between its own ' +
    'min and max anyway (by default 2 and 20 ticks)';
  return checkMs(value, 'sessionTimeoutMs', { min: MIN_SESSION_TIMEOUT_MS, max: MAX_SESSION_TIMEOUT_MS, whole: true, hint }) ?? DEFAULT_SESSION_TIMEOUT_MS;
}

function leaseMargin(value: unknown, sessionTimeoutMs: number): number | undefined {
  const max = sessionTimeoutMs * (1 - MIN_LEASE_SHARE);
  return checkMs(value, 'leaseMarginMs', {
    max,
    maxLabel: `nine tenths of sessionTimeoutMs (${Math.floor(max)})`,
    hint: 'set it to syncLimit × tickTime + tickTime / 2 of your ensemble plus a little, and sessionTimeoutMs comfortably above that',
  });
}

import { type LockLossReason, ZkLockError } from '../../errors.js';
import { digestId, validateDigest } from '../../zookeeper/zk-acl.js';
import { checkMs } from '../../shared/durations.js';
import { SessionSlot } from '../../zookeeper/session-slot.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS } from '../../zookeeper/zk-connection.options.js';
import type { ConnectionState, ConnectionStateListener, ZkConnectionLike } from '../../zookeeper/zk-connection-like.js';
import type { ZkSessionApi } from '../../zookeeper/zk-session-api.js';
import { InMemorySession } from './in-memory-session.js';
import type { ZNodeTree } from './znode-tree.js';

/** Options of one client of the in-memory ZooKeeper. */
export interface InMemoryConnectionOptions {
  /**
   * Session timeout, in ms: after `disconnect()`, the session expires this long later unless
   * `reconnect()` comes first (as a real server expires a silent client). Works with fake timers.
   * @default 15000
   */
  sessionTimeoutMs?: number;
  /**
   * How long LockService's tryAcquire may wait for a connected session, in ms (as on ZkConnection).
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * Digest credential, `user:password`: the session authenticates as it, and the lock paths get its ACL.
   * @default undefined (no identity)
   */
  digest?: string;
}

/** Tells the owning InMemoryZooKeeper about sessions, so ids stay unique per tree. */
export interface SessionFactory {
  readonly name: string;
  readonly tree: ZNodeTree;
  nextSessionId(): string;
}

/**
 * A client of the in-memory ZooKeeper, in place of ZkConnection: pass it to ZkLockModule (or
 * LockService) as `connection`. Same states and events as ZkConnection ('connected', 'suspended',
 * 'reconnected', 'lost', 'closed'), and the same rule after a lost session: a new one is opened.
 * `expireSession()`, `disconnect()` and `reconnect()` play the faults a real server and network cause.
 */
export class InMemoryConnection implements ZkConnectionLike {
  readonly sessionTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly digest: string | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** The current session, the state and its listeners. */
  private readonly slot: SessionSlot<InMemorySession>;
  /** The current session while it is live (see SessionSource.live), kept by the slot. @internal */
  readonly live: ZkSessionApi | undefined = undefined;

  /** Made by InMemoryZooKeeper.connect(). @internal */
  static of(server: SessionFactory, options: InMemoryConnectionOptions = {}): InMemoryConnection {
    return new InMemoryConnection(server, options);
  }

  private constructor(
    private readonly server: SessionFactory,
    options: InMemoryConnectionOptions,
  ) {
    this.slot = new SessionSlot(server.name, (session) => this.shutDown(session), this);
    this.sessionTimeoutMs = checkMs(options.sessionTimeoutMs, 'sessionTimeoutMs', { minExclusive: true }) ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.connectTimeoutMs = checkMs(options.connectTimeoutMs, 'connectTimeoutMs', { minExclusive: true }) ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.digest = options.digest === undefined ? undefined : validateDigest(options.digest);
  }

  /** `in-memory:<name>`: there is no server address. */
  get connectionString(): string {
    return `in-memory:${this.server.name}`;
  }

  /** No addon: the in-memory server. */
  readonly addon = 'in-memory';
  /** No network, so no TLS. */
  readonly tls = false;

  /** The in-memory server grants what was asked. */
  get negotiatedSessionTimeoutMs(): number | undefined {
    return this.slot.current ? this.sessionTimeoutMs : undefined;
  }

  /** Opens the first session (at once: the in-memory server is always up). */
  connect(): Promise<void> {
    if (this.slot.closed) return Promise.reject(this.slot.closedError());
    if (!this.slot.started) {
      this.slot.started = true;
      this.openSession();
    }
    return Promise.resolve();
  }

  /** The state of the current session, or `closed`. */
  get state(): ConnectionState | 'connecting' {
    return this.slot.state;
  }

  /** The current session's id, or undefined before the first connect. */
  get sessionId(): string | undefined {
    return this.slot.sessionId;
  }

  /** Listens to state changes; returns the function that stops listening. */
  onStateChange(listener: ConnectionStateListener): () => void {
    return this.slot.onStateChange(listener);
  }

  /** The current live session, waiting for one while a new one is being opened. @internal */
  session(signal?: AbortSignal): Promise<ZkSessionApi> {
    return this.slot.session(signal);
  }

  /** Ends the session (its ephemeral nodes, so its locks, go at once) and opens no other. */
  close(): void {
    this.slot.close();
  }

  /** Closing: the tree drops the session's ephemeral nodes, then the session ends for its users. */
  private shutDown(session: InMemorySession | undefined): void {
    clearTimeout(this.expiryTimer);
    if (session && !session.lost.aborted) {
      this.server.tree.closeSession(session.id);
      this.slot.endClosed(session);
    }
  }

  /**
   * The server expires the session now, as after a client silent for the whole session timeout:
   * its ephemeral nodes go (other clients see its locks free), its holders' signals abort with
   * LockLostError, the state goes `lost`, and a new session is opened (`connected`) for new work.
   */
  expireSession(): void {
    const session = this.liveSession('expireSession');
    this.endSession(session, 'the session expired', 'session-expired');
  }

  /**
   * The connection drops: state `suspended`, requests fail with connection loss until `reconnect()`,
   * and held locks stay held. After sessionTimeoutMs without reconnect() the session expires.
   */
  disconnect(): void {
    const session = this.liveSession('disconnect');
    if (!session.connected) return;
    session.setConnected(false);
    this.expiryTimer = setTimeout(
      () => this.endSession(session, `disconnected for longer than the session timeout (${this.sessionTimeoutMs} ms)`, 'disconnected'),
      this.sessionTimeoutMs,
    );
    this.expiryTimer.unref();
    this.slot.emit('suspended', session.id);
  }

  /** The connection comes back within the session timeout: same session, everything it held still held. */
  reconnect(): void {
    const session = this.liveSession('reconnect');
    if (session.connected) return;
    clearTimeout(this.expiryTimer);
    session.setConnected(true);
    this.slot.emit('reconnected', session.id);
  }

  private liveSession(action: string): InMemorySession {
    const session = this.slot.current;
    if (!session || session.lost.aborted || this.slot.closed) {
      throw new ZkLockError(`${action}: this in-memory connection has no live session (connect it first; a closed one stays closed).`);
    }
    return session;
  }

  private endSession(session: InMemorySession, detail: string, end: LockLossReason): void {
    if (session.lost.aborted || this.slot.current !== session) return;
    clearTimeout(this.expiryTimer);
    this.server.tree.closeSession(session.id);
    session.markLost(detail, end);
    this.slot.emit('lost', session.id);
    // As ZkConnection: a new session for new work, opened after everyone has heard of the loss.
    queueMicrotask(() => {
      if (!this.slot.closed) this.openSession();
    });
  }

  private openSession(): void {
    const identities = this.digest ? [{ scheme: 'digest', id: digestId(this.digest) }] : [];
    const session = new InMemorySession(this.server.tree, this.server.nextSessionId(), identities, this.sessionTimeoutMs);
    this.server.tree.openSession(session.id);
    this.slot.open(session);
  }
}

import { type LockLossReason, ZkConnectionError } from '../errors.js';
import { waitInSet } from '../shared/promises.js';
import type { ConnectionState, ConnectionStateListener } from './zk-connection-like.js';
import type { ZkSessionApi } from './zk-session-api.js';
import type { ZkSessionAuthError } from './zk-errors.js';

/** A session as its connection drives it: ZkSession, or the testing kit's InMemorySession. */
export interface OwnedSession extends ZkSessionApi {
  /**
   * Ends the session for its users: `lost` aborts with a ZkSessionLostError (carrying `refusal` when
   * the servers refused the session for want of authentication). Idempotent.
   */
  markLost(detail: string, end: LockLossReason, refusal?: ZkSessionAuthError): void;
}

/** The connection holding a slot: the slot keeps its `live` field (SessionSource.live). */
export interface LiveSessionHolder {
  live: ZkSessionApi | undefined;
}

/**
 * What ZkConnection and the testing kit's InMemoryConnection share (each holds one): the state and
 * its listeners, the callers waiting for a session, the closed and started flags, and the holder's
 * `live` field. The connection opens the sessions (`open`) and says what closing stops (`shutDown`).
 */
export class SessionSlot<S extends OwnedSession> {
  /** The current session: live, or lost while the next one is on its way. */
  current: S | undefined;
  closed = false;
  /** connect() started: from now on a session is always on its way until close(), and session() waits for it. */
  started = false;
  /** Why the last connect() failed: session() callers get it while no other connect() runs. */
  private startFailure: Error | undefined;
  private sessionWaiters = new Set<() => void>();
  private readonly listeners = new Set<ConnectionStateListener>();

  constructor(
    /** Names the connection in its errors: the connect string, or the in-memory server's name. */
    private readonly label: string,
    /**
     * Closing, once: stops what the connection runs (timers, handles) and ends `session` with
     * `endClosed`, in the order the connection needs. Then session() waiters are woken (they fail)
     * and listeners hear `closed`.
     */
    private readonly shutDown: (session: S | undefined) => void,
    /** Its `live` is the current session while that is live: set by `open`, cleared at its end and at close. */
    private readonly holder: LiveSessionHolder,
  ) {}

  /**
   * A new session is open and connected: it is the current one and the holder's `live` (cleared
   * when it ends), session() callers get it and listeners hear `connected`.
   */
  open(session: S): void {
    this.current = session;
    this.holder.live = session;
    session.onLost(() => {
      if (this.holder.live === session) this.holder.live = undefined;
    });
    this.wakeSessionWaiters();
    this.emit('connected', session.id);
  }

  /** The state of the current session, or `closed`. */
  get state(): ConnectionState | 'connecting' {
    if (this.closed) return 'closed';
    const current = this.current;
    if (!current || current.lost.aborted) return 'connecting';
    return current.connected ? 'connected' : 'suspended';
  }

  /** The current session's id (hex), or undefined before the first connect. */
  get sessionId(): string | undefined {
    return this.current?.id;
  }

  /** Listens to state changes; returns the function that stops listening. */
  onStateChange(listener: ConnectionStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The current live session, waiting for one while a new session is being opened.
   * It may be suspended: callers wait with `whenConnected` before writing.
   */
  session(signal?: AbortSignal): Promise<ZkSessionApi> {
    const current = this.current;
    if (current && !current.lost.aborted) return Promise.resolve(current);
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.started) return Promise.reject(this.startFailure ?? new ZkConnectionError(this.label, 'connect() was not called'));
    return waitInSet(this.sessionWaiters, signal).then(() => this.session(signal));
  }

  /** Ends the session (its ephemeral nodes, so its locks, go at once) and opens no other. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.holder.live = undefined;
    const session = this.current;
    this.shutDown(session);
    this.wakeSessionWaiters();
    this.emit('closed', session?.id ?? '');
  }

  /**
   * connect() failed with `error`: no session is on its way until connect() is called again, and
   * session() callers, those waiting included, get `error`.
   */
  startFailed(error: Error): void {
    this.started = false;
    this.startFailure = error;
    this.wakeSessionWaiters();
  }

  /** Ends a session because the application closed its connection. */
  endClosed(session: S | undefined): void {
    session?.markLost('the connection was closed by the application', 'closed');
  }

  closedError(): ZkConnectionError {
    return new ZkConnectionError(this.label, 'the connection was closed');
  }

  /** A session was opened, or the connection closed: session() callers look again. */
  private wakeSessionWaiters(): void {
    const waiters = this.sessionWaiters;
    this.sessionWaiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Listeners run after the state has changed; one that throws cannot stop the others or the state machine. */
  emit(state: ConnectionState, sessionId: string): void {
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

import { setMaxListeners } from 'node:events';
import { waitInSet } from '../shared/promises.js';
import { ZkConnectionLossError } from './zk-errors.js';
import type { ZkSessionApi } from './zk-session-api.js';

/**
 * What every session implementation (the native one, the testing kit's in-memory one) shares: whether
 * it is connected, who waits for the connection, and its end: `lost` aborts once and each `onLost`
 * listener is told once.
 */
export abstract class SessionLifecycle {
  connected = true;
  private readonly lostController = new AbortController();
  /** Aborted, with the session's end as its reason, when the session ends. */
  readonly lost: AbortSignal = this.lostController.signal;
  private connectWaiters = new Set<() => void>();
  private readonly lostListeners = new Set<() => void>();

  constructor() {
    // Every held lock and every waiter listens for the session's end: many listeners are expected.
    setMaxListeners(0, this.lostController.signal);
  }

  /** The connection dropped or came back (the session lives on while disconnected). */
  setConnected(connected: boolean): void {
    this.connected = connected;
    if (!connected) return;
    const waiters = this.connectWaiters;
    this.connectWaiters = new Set();
    for (const wake of waiters) wake();
  }

  onLost(listener: () => void): () => void {
    if (this.lost.aborted) {
      listener();
      return () => undefined;
    }
    this.lostListeners.add(listener);
    // Set.delete bound to the listener: every holder takes one, so it is the set's own function.
    return this.lostListeners.delete.bind(this.lostListeners, listener);
  }

  whenConnected(signal?: AbortSignal): Promise<void> {
    if (this.lost.aborted) return Promise.reject(this.lost.reason as Error);
    if (this.connected) return Promise.resolve();
    return waitInSet(this.connectWaiters, signal).then(() => {
      if (this.lost.aborted) throw this.lost.reason as Error;
    });
  }

  /**
   * Ends the session: `lost` aborts with `reason`, then `cleanUp` runs (the implementation's own
   * requests and watches), then connection waiters wake (and fail) and listeners are told. Idempotent.
   */
  protected end(reason: Error, cleanUp?: () => void): void {
    if (this.lost.aborted) return;
    this.connected = false;
    this.lostController.abort(reason);
    cleanUp?.();
    for (const wake of this.connectWaiters) wake();
    this.connectWaiters.clear();
    const listeners = [...this.lostListeners];
    this.lostListeners.clear();
    for (const listener of listeners) listener();
  }
}

/**
 * Runs a request until it gets an answer: after each connection loss, waits for the connection to
 * come back (or `stop`, or the session's end) and sends it again. Only for requests that are safe
 * to repeat.
 */
export async function untilAnswered<T>(session: ZkSessionApi, stop: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
  for (;;) {
    if (!session.connected) await session.whenConnected(stop);
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof ZkConnectionLossError)) throw error;
    }
  }
}

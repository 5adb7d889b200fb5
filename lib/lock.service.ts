import { hostname } from 'node:os';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { InvalidOptionsError, LockLostError, LockServiceClosedError } from './errors.js';
import { currentLockContext, type LockContext } from './lock-context.js';
import type { AcquireOptions, HeldLockInfo, LockHandle } from './lock-handle.js';
import { FairLock } from './recipes/fair-lock.js';
import type { HeldLock } from './recipes/held-lock.js';
import { ReentrantHandle } from './reentrant-handle.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';
import {
  type ConnectionState,
  type ConnectionStateListener,
  ZkConnection,
  type ZkConnectionOptions,
} from './zookeeper/zk-connection.js';

/**
 * Distributed locks for the application: one ZooKeeper session per LockService (or the connection
 * the options supply), opened at module init; at shutdown what is still held is released and the
 * session closed.
 *
 * Inside a lock context (each request, each decorated call) locks are reentrant: taking a resource
 * the context already holds succeeds at once and counts. Outside any context every acquire is its own.
 */
const DEFAULT_SHUTDOWN_GRACE_MS = 5000;

@Injectable()
export class LockService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ZkLock');
  private readonly connection: ZkConnection;
  private readonly ownsConnection: boolean;
  private readonly fairLock: FairLock;
  private readonly held = new Set<HeldLock>();
  private readonly defaultWaitTimeoutMs: number | undefined;
  private readonly ownerData = Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid }));
  private readonly forget = (lock: HeldLock): void => {
    this.held.delete(lock);
    if (this.held.size === 0) this.allReleased?.();
  };
  private closing = false;
  private allReleased: (() => void) | undefined;
  private readonly shutdownGraceMs: number;

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('options', 'ZkLockModule needs an options object with at least connectionString');
    }
    this.defaultWaitTimeoutMs = validateWaitTimeout(options.defaultWaitTimeoutMs, 'defaultWaitTimeoutMs');
    this.shutdownGraceMs = validateWaitTimeout(options.shutdownGraceMs, 'shutdownGraceMs') ?? DEFAULT_SHUTDOWN_GRACE_MS;
    this.ownsConnection = !options.connection;
    // ZkConnection checks connectionString itself: required unless a connection is supplied.
    this.connection = options.connection ?? new ZkConnection(options as ZkConnectionOptions);
    this.fairLock = new FairLock(this.connection, {
      rootPath: options.rootPath,
      connectWaitMs: this.connection.connectTimeoutMs,
      onBackgroundError: (error) => this.logger.warn(`Lock clean-up failed and will be left to the session: ${String(error)}`),
    });
  }

  /** Connects to ZooKeeper; start-up fails with ZkConnectionError when it cannot. */
  async onModuleInit(): Promise<void> {
    await this.connection.connect();
  }

  /**
   * Shutdown begins (before the HTTP server stops taking requests): refuse new locks, give the
   * holders still running up to shutdownGraceMs to finish, then take what is still held away from
   * them: their signal aborts with a LockLostError saying the application is stopping.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    if (this.held.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.shutdownGraceMs);
        this.allReleased = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.allReleased = undefined;
    }
    await this.revokeAll();
  }

  /** Releases anything left, then closes the session unless it was supplied. */
  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.revokeAll();
    if (this.ownsConnection) this.connection.close();
  }

  private async revokeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.held].map((lock) => lock.revoke('the application is shutting down')));
    for (const result of results) {
      if (result.status === 'rejected') this.logger.warn(`Releasing a lock at shutdown failed: ${String(result.reason)}`);
    }
  }

  /**
   * Waits for the lock on `resource` and returns its handle. Release it with `handle.release()`.
   * @throws LockTimeoutError after waitTimeoutMs; LockAbortedError when `signal` aborts;
   *   InvalidResourceNameError for a name that cannot be a lock.
   */
  async acquire(resource: string, options: AcquireOptions = {}): Promise<LockHandle> {
    const waitTimeoutMs = validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? this.defaultWaitTimeoutMs;
    const context = currentLockContext();
    const mine = this.heldInContext(context, resource);
    if (mine) return ReentrantHandle.join(context!, mine);
    this.assertOpen(resource);
    if (!context) return this.take(resource, waitTimeoutMs, options.signal);
    // Two holders in one context asking at once share one queue entry.
    let pending = context.pending.get(resource);
    if (!pending) {
      pending = this.take(resource, waitTimeoutMs, options.signal);
      context.pending.set(resource, pending);
      const clear = (): void => {
        if (context.pending.get(resource) === pending) context.pending.delete(resource);
      };
      pending.then(clear, clear);
    }
    return ReentrantHandle.join(context, await pending);
  }

  /**
   * Takes several locks, all or nothing, in one canonical order (sorted, duplicates dropped), so that
   * callers asking for {a, b} and {b, a} cannot deadlock. On any failure the ones taken are released.
   * `waitTimeoutMs` bounds the whole call.
   */
  async acquireAll(resources: readonly string[], options: AcquireOptions = {}): Promise<LockHandle[]> {
    const ordered = [...new Set(resources)].sort();
    const waitTimeoutMs = validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? this.defaultWaitTimeoutMs;
    const deadline = waitTimeoutMs === undefined ? undefined : performance.now() + waitTimeoutMs;
    const handles: LockHandle[] = [];
    try {
      for (const resource of ordered) {
        const left = deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
        handles.push(await this.acquire(resource, { waitTimeoutMs: left, signal: options.signal }));
      }
      return handles;
    } catch (error) {
      await Promise.allSettled(handles.reverse().map((handle) => handle.release()));
      throw error;
    }
  }

  /**
   * Takes the lock if it is free right now, without waiting; null when someone else holds it.
   * Inside a context that already holds it, succeeds at once.
   */
  async tryAcquire(resource: string): Promise<LockHandle | null> {
    const context = currentLockContext();
    const mine = this.heldInContext(context, resource);
    if (mine) return ReentrantHandle.join(context!, mine);
    this.assertOpen(resource);
    const lock = await this.fairLock.tryAcquire(resource, { data: this.ownerData, onEnd: this.forget });
    if (!lock) return null;
    this.track(lock);
    return context ? ReentrantHandle.join(context, lock) : lock;
  }

  /**
   * Runs `fn` while holding the lock and releases it afterwards, also when `fn` throws.
   * If the lock was lost while `fn` ran and `fn` itself succeeded, rejects with the LockLostError:
   * the work was not exclusive, and the caller must know.
   */
  async withLock<T>(resource: string, fn: (lock: LockHandle) => T | Promise<T>, options: AcquireOptions = {}): Promise<T> {
    const lock = await this.acquire(resource, options);
    let result: T;
    try {
      result = await fn(lock);
    } finally {
      // Always release, so a reentrant holder is counted out even when the lock was lost meanwhile.
      await lock.release().catch((error: unknown) => {
        if (!(error instanceof LockLostError)) throw error; // the loss is reported below
      });
    }
    if (lock.signal.aborted) throw lock.signal.reason;
    return result;
  }

  /**
   * The lock the current request or decorated call holds on `resource` (its signal and fencing
   * token), or undefined. This is how a handler guarded by @DistributedLock reaches its lock.
   */
  heldLock(resource: string): HeldLockInfo | undefined {
    return this.heldInContext(currentLockContext(), resource);
  }

  /** The ZooKeeper connection's state. */
  get connectionState(): ConnectionState | 'connecting' {
    return this.connection.state;
  }

  /** Listens to connection state changes; returns the function that stops listening. */
  onConnectionStateChange(listener: ConnectionStateListener): () => void {
    return this.connection.onStateChange(listener);
  }

  private async take(resource: string, waitTimeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<HeldLock> {
    const lock = await this.fairLock.acquire(resource, { waitTimeoutMs, signal, data: this.ownerData, onEnd: this.forget });
    this.track(lock);
    return lock;
  }

  /** Counts a granted lock among those shutdown must release (unless it was lost already). */
  private track(lock: HeldLock): void {
    if (lock.isHeld()) this.held.add(lock);
  }

  /** The lock `context` holds on `resource`, while it is still held. */
  private heldInContext(context: LockContext | undefined, resource: string): HeldLock | undefined {
    const entry = context?.held.get(resource);
    return entry?.lock.isHeld() ? entry.lock : undefined;
  }

  private assertOpen(resource: string): void {
    if (this.closing) throw new LockServiceClosedError(resource);
  }
}

function validateWaitTimeout(value: unknown, option: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new InvalidOptionsError(option, `must be a number of milliseconds >= 0 (or absent to wait forever), got ${String(value)}`);
  }
  return value;
}

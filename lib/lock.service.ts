import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InvalidOptionsError, LockServiceClosedError } from './errors.js';
import type { AcquireOptions, LockHandle } from './lock-handle.js';
import { FairLock } from './recipes/fair-lock.js';
import type { HeldLock } from './recipes/held-lock.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';
import { type ConnectionState, type ConnectionStateListener, ZkConnection } from './zookeeper/zk-connection.js';

/**
 * Distributed locks for the application: one ZooKeeper session per LockService, opened at module
 * init and closed at shutdown, after releasing what is still held.
 */
@Injectable()
export class LockService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ZkLock');
  private readonly connection: ZkConnection;
  private readonly fairLock: FairLock;
  private readonly held = new Set<HeldLock>();
  private readonly defaultWaitTimeoutMs: number | undefined;
  private readonly ownerData = Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid }));
  private readonly forget = (lock: HeldLock): void => {
    this.held.delete(lock);
  };
  private closing = false;

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidOptionsError('options', 'ZkLockModule needs an options object with at least connectionString');
    }
    this.defaultWaitTimeoutMs = validateWaitTimeout(options.defaultWaitTimeoutMs, 'defaultWaitTimeoutMs');
    this.connection = new ZkConnection(options);
    this.fairLock = new FairLock(this.connection, {
      rootPath: options.rootPath,
      onBackgroundError: (error) => this.logger.warn(`Lock clean-up failed and will be left to the session: ${String(error)}`),
    });
  }

  /** Connects to ZooKeeper; start-up fails with ZkConnectionError when it cannot. */
  async onModuleInit(): Promise<void> {
    await this.connection.connect();
  }

  /** Releases every lock still held, then closes the session. */
  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    const results = await Promise.allSettled([...this.held].map((lock) => lock.release()));
    for (const result of results) {
      if (result.status === 'rejected') this.logger.warn(`Releasing a lock at shutdown failed: ${String(result.reason)}`);
    }
    this.connection.close();
  }

  /**
   * Waits for the lock on `resource` and returns its handle. Release it with `handle.release()`.
   * @throws LockTimeoutError after waitTimeoutMs; LockAbortedError when `signal` aborts;
   *   InvalidResourceNameError for a name that cannot be a lock.
   */
  async acquire(resource: string, options: AcquireOptions = {}): Promise<LockHandle> {
    this.assertOpen(resource);
    const waitTimeoutMs = validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? this.defaultWaitTimeoutMs;
    const lock = await this.fairLock.acquire(resource, {
      waitTimeoutMs,
      signal: options.signal,
      data: this.ownerData,
      onEnd: this.forget,
    });
    return this.track(lock);
  }

  /** Takes the lock if it is free right now, without waiting; null when someone else holds it. */
  async tryAcquire(resource: string): Promise<LockHandle | null> {
    this.assertOpen(resource);
    const lock = await this.fairLock.tryAcquire(resource, { data: this.ownerData, onEnd: this.forget });
    return lock && this.track(lock);
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
      if (lock.isHeld()) await lock.release();
    }
    if (lock.signal.aborted) throw lock.signal.reason;
    return result;
  }

  /** The ZooKeeper connection's state. */
  get connectionState(): ConnectionState | 'connecting' {
    return this.connection.state;
  }

  /** Listens to connection state changes; returns the function that stops listening. */
  onConnectionStateChange(listener: ConnectionStateListener): () => void {
    return this.connection.onStateChange(listener);
  }

  private track(lock: HeldLock): HeldLock {
    if (lock.isHeld()) this.held.add(lock);
    return lock;
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

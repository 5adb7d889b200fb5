import { LockAbortedError, LockOperationError, LockTimeoutError, ZkLockError } from '../errors.js';
import { encodeResource, validateRootPath } from '../zookeeper/paths.js';
import { ZkError } from '../zookeeper/zk-errors.js';
import { MAX_TIMER_MS } from '../zookeeper/zk-connection.js';
import { HeldLock } from './held-lock.js';
import { exclusiveDriver, type LockDriver } from './lock-driver.js';
import { LockQueue, type SessionSource } from './lock-queue.js';

export interface FairLockOptions {
  /** Parent of every lock node. @default '/locks' */
  rootPath?: string;
  /** Failures of clean-up that ran after the caller was answered (for logging). */
  onBackgroundError?: (error: unknown) => void;
  /**
   * tryAcquire and `waitTimeoutMs: 0` never wait for the lock, but may have to wait for a connected
   * session; this bounds that wait, in ms (then LockTimeoutError).
   * @default 10000
   */
  connectWaitMs?: number;
}

export interface RecipeAcquireOptions {
  /** ms to wait; undefined waits forever; 0 gives up at once with LockTimeoutError. */
  waitTimeoutMs?: number;
  signal?: AbortSignal;
  /** Stored in the lock node (who holds it), at most a few hundred bytes. */
  data?: Buffer;
  /** Told once when the returned handle is released or lost. */
  onEnd?: (lock: HeldLock) => void;
}

export const DEFAULT_ROOT_PATH = '/locks';

/**
 * The fair exclusive lock from ZooKeeper's recipes: EPHEMERAL_SEQUENTIAL nodes under
 * `<rootPath>/<encoded resource>`, the lowest holds, each waiter watches only its predecessor.
 * Needs no Nest: `new FairLock(connection).acquire('orders:42')`.
 */
export class FairLock {
  readonly rootPath: string;
  private readonly queue: LockQueue;
  private readonly connectWaitMs: number;
  protected readonly driver: LockDriver = exclusiveDriver;

  constructor(sessions: SessionSource, options: FairLockOptions = {}) {
    this.rootPath = validateRootPath(options.rootPath ?? DEFAULT_ROOT_PATH);
    this.queue = new LockQueue(sessions, this.rootPath, options.onBackgroundError);
    this.connectWaitMs = options.connectWaitMs ?? 10_000;
  }

  /** The znode under which a resource's queue lives. */
  pathOf(resource: string): string {
    return `${this.rootPath}/${encodeResource(resource)}`;
  }

  /**
   * Waits for the lock.
   * @throws LockTimeoutError, LockAbortedError, InvalidResourceNameError, LockOperationError
   */
  async acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<HeldLock> {
    const lock = await this.take(resource, options, false);
    return lock!;
  }

  /** Takes the lock only if it is free right now; null otherwise. Leaves no node behind either way. */
  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<HeldLock | null> {
    return this.take(resource, options, true);
  }

  private async take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<HeldLock | null> {
    const parent = this.pathOf(resource);
    const noWait = tryOnly || options.waitTimeoutMs === 0;
    const stopper = new Stopper(noWait ? this.connectWaitMs : options.waitTimeoutMs, options.signal);
    try {
      const grant = await this.queue.acquire({
        parent,
        driver: this.driver,
        data: options.data ?? EMPTY,
        stop: stopper.signal,
        tryOnly: noWait,
      });
      if (!grant) {
        if (tryOnly) return null;
        throw new LockTimeoutError(resource, 0);
      }
      return new HeldLock(resource, grant, this.queue, options.onEnd);
    } catch (error) {
      throw stopper.explain(error, resource);
    } finally {
      stopper.dispose();
    }
  }
}

const EMPTY = Buffer.alloc(0);
const TIMED_OUT = Symbol('timed out');

/** One signal for "stop waiting": the caller's timeout or the caller's own signal. */
class Stopper {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => this.controller.abort(this.callerSignal?.reason);

  constructor(
    private readonly waitTimeoutMs: number | undefined,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    // Longer than setTimeout can count is as good as forever (Node would fire it at once).
    if (waitTimeoutMs !== undefined && waitTimeoutMs > 0 && waitTimeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => this.controller.abort(TIMED_OUT), waitTimeoutMs);
    }
    if (callerSignal?.aborted) this.onAbort();
    else callerSignal?.addEventListener('abort', this.onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  explain(error: unknown, resource: string): unknown {
    if (this.signal.aborted && error === this.signal.reason) {
      return this.signal.reason === TIMED_OUT
        ? new LockTimeoutError(resource, this.waitTimeoutMs ?? 0)
        : new LockAbortedError(resource, this.signal.reason);
    }
    if (error instanceof ZkLockError) return error;
    if (error instanceof ZkError) return new LockOperationError(resource, error.message, { cause: error });
    return error;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onAbort);
  }
}

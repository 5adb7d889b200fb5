import { InvalidOptionsError, InvalidResourceNameError, LockTimeoutError } from '../errors.js';
import { encodeResource, validateRootPath, validateZkPath } from '../zookeeper/paths.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import { validateTokenEpoch } from '../queue/fencing-token.js';
import { GrantedLock } from './granted-lock.js';
import type { LockHandle } from './lock-handle.js';
import { LockParents } from '../queue/lock-parents.js';
import { ProtectedCreate } from '../queue/protected-create.js';
import type { QueueGrant, QueueSink, SessionSource, WaiterSpec } from '../queue/queue.types.js';
import { NodeRemover } from '../queue/node-remover.js';
import { Stopper } from '../queue/stopper.js';
import { waitInQueue } from '../queue/queue-waiter.js';
import { WaiterHost } from '../queue/waiter-host.js';

/** Options shared by every recipe of one client (FairLock, ReadWriteLock, Semaphore, SimpleLock). */
export interface RecipeOptions {
  /** Parent of every lock node. @default '/locks' */
  rootPath?: string;
  /**
   * Failures of clean-up that ran after the caller was answered (for logging).
   * @default undefined (such failures are ignored; the node is left to its session)
   */
  onBackgroundError?: (error: unknown) => void;
  /**
   * tryAcquire and `waitTimeoutMs: 0` never wait for the lock, but may have to wait for a connected
   * session; this bounds that wait, in ms (then LockTimeoutError).
   * @default 10000
   */
  connectWaitMs?: number;
  /**
   * ACL for the nodes the recipes create (rootPath, each lock's parent, the lock nodes), given in
   * each create request. Absent: open, ZooKeeper's default. LockService sets it from the `digest`
   * option.
   * @default undefined (open)
   */
  acl?: readonly ZkAcl[];
  /**
   * The first 4 digits of every fencing token, 0 to 9999. Raise it (every client of the locks alike)
   * after ZooKeeper is restored from an older snapshot or an empty data directory: its zxids start
   * over lower, and tokens would go backwards without it.
   * @default 0
   */
  tokenEpoch?: number;
}

/** Options of one acquire on a recipe. */
export interface RecipeAcquireOptions {
  /**
   * How long to wait for the lock, in ms; 0 gives up at once with LockTimeoutError.
   * @default undefined (wait forever)
   */
  waitTimeoutMs?: number;
  /**
   * Aborting it stops waiting with a LockAbortedError and removes the queue entry.
   * @default undefined (only waitTimeoutMs ends the wait)
   */
  signal?: AbortSignal;
  /**
   * Stored in the lock node (who holds it): at most {@link MAX_NODE_DATA_BYTES} bytes.
   * @default empty
   */
  data?: Buffer;
  /**
   * The lock's exact ZooKeeper path, instead of `<rootPath>/<encoded resource>`: the path other
   * services (Curator, kazoo) use for the same lock. The resource is then only the lock's label.
   * @default undefined (`<rootPath>/<encoded resource>`)
   */
  zkPath?: string;
  /**
   * Makes the lock revocable: its holder listens for a release request written into its node
   * (LockService.requestRelease, Curator's `Revoker.attemptRevoke`). `'notify'`: the handle's
   * `releaseRequested` signal aborts and the holder decides; `'release'`: the lock is released at
   * once and its `signal` aborts (LockLostError, reason `taken-away`). Either way a holder whose node is
   * deleted by a forced request learns it lost the lock.
   * @default undefined (not revocable: requests are not heard; a forced one is noticed at release)
   */
  onReleaseRequest?: 'notify' | 'release';
  /**
   * Told once when the returned handle is released or lost. For LockService and CohortLock: not in
   * the published types (`@internal`, stripped from the .d.ts).
   * @internal
   */
  onEnd?: (lock: GrantedLock) => void;
  /**
   * Told once when the acquire ends without a handle: it failed, timed out or was aborted, or
   * tryAcquire found the lock taken. For LockService and CohortLock: not in the published types.
   * @internal
   */
  onNoLock?: () => void;
  /**
   * Told each time the acquire starts waiting behind others (for Candidacy: its first term is decided).
   * @internal
   */
  onWaiting?: () => void;
}

export const DEFAULT_ROOT_PATH = '/locks';
/** The most a lock node may store about its holder: lock nodes are read by every waiter. */
export const MAX_NODE_DATA_BYTES = 1024;
const EMPTY = Buffer.alloc(0);

/**
 * How a recipe starts its ZooKeeper part of one acquire: `stop` ends the wait; `noWait` means give
 * up (null) when busy. It tells `sink` once how it ended (the grant, null, or the error).
 */
export type StartAcquire = (stop: AbortSignal, noWait: boolean, sink: QueueSink) => void;

/**
 * Or a place in a queue (QueueLock), waited for by the queue's waiter (queue-waiter.ts): the node
 * goes in `parent`, else in the resource's znode. Data, not a callback: one call less per acquire.
 */
export interface QueuePlace extends Pick<WaiterSpec, 'driver' | 'under'> {
  readonly parent: string | undefined;
}

/**
 * What every recipe of one client shares: sessions, root path, the protected create and the
 * parents' rules, the queue waiters' host, clean-up, and the way a wait is bounded and its failures
 * explained.
 */
export class RecipeRuntime {
  readonly rootPath: string;
  readonly remover: NodeRemover;
  /** Creates the parents of lock nodes (the rootPath rule). */
  readonly parents: LockParents;
  /** The one way a recipe creates its node (Curator's `withProtection()`). */
  readonly creator: ProtectedCreate;
  /** What the queue waiters of this client share. */
  readonly waiters: WaiterHost;
  /** The operator's epoch, the first part of every token (see fencing-token.ts). */
  readonly tokenEpoch: number;
  readonly connectWaitMs: number;
  readonly acl: readonly ZkAcl[] | undefined;

  constructor(
    readonly sessions: SessionSource,
    options: RecipeOptions = {},
  ) {
    this.rootPath = validateRootPath(options.rootPath ?? DEFAULT_ROOT_PATH);
    this.remover = new NodeRemover(options.onBackgroundError);
    this.acl = options.acl;
    this.tokenEpoch = validateTokenEpoch(options.tokenEpoch);
    this.parents = new LockParents(this.rootPath, options.acl);
    this.creator = new ProtectedCreate(this.parents, options.acl, this.remover);
    this.waiters = new WaiterHost(sessions, { creator: this.creator, remover: this.remover, tokenEpoch: this.tokenEpoch });
    this.connectWaitMs = options.connectWaitMs ?? 10_000;
  }

  /** The znode of a resource (its queue's parent, or the simple lock's node). */
  pathOf(resource: string): string {
    return `${this.rootPath}/${encodeResource(resource)}`;
  }

  /**
   * The znode of one acquire: its `zkPath` (checked), else the resource's.
   * @throws InvalidResourceNameError for a bad zkPath, or one at or under rootPath: the locks named
   *   by resource live there, and one lock must not have two names.
   */
  pathFor(resource: string, zkPath: string | undefined): string {
    if (zkPath === undefined) return `${this.rootPath}/${encodeResource(resource)}`; // (pathOf, one call less on every acquire)
    validateZkPath(zkPath);
    if (this.isUnderRoot(zkPath)) {
      throw new InvalidResourceNameError(
        zkPath,
        `zkPath is at or under rootPath (${this.rootPath}), where the locks named by resource live: name such a lock by its resource, or give it a path outside rootPath`,
      );
    }
    return zkPath;
  }

  /** Whether `path` is rootPath or below it. */
  isUnderRoot(path: string): boolean {
    return path === this.rootPath || path.startsWith(`${this.rootPath}/`);
  }

  /** The node data to store, checked against the cap. */
  dataOf(options: RecipeAcquireOptions): Buffer {
    const data = options.data ?? EMPTY;
    if (data.length > MAX_NODE_DATA_BYTES) {
      throw new InvalidOptionsError('data', `lock node data is ${data.length} bytes and the limit is ${MAX_NODE_DATA_BYTES}; store a key, not a document`);
    }
    return data;
  }

  /**
   * One acquire of a recipe: bounds it by the caller's timeout and signal, starts its ZooKeeper part
   * (`start`), turns the grant into a GrantedLock and every failure into the library's typed errors.
   * Resolves null only for `tryOnly`.
   */
  acquire(resource: string, options: RecipeAcquireOptions, tryOnly: boolean, start: StartAcquire | QueuePlace): Promise<GrantedLock | null> {
    const noWait = tryOnly || options.waitTimeoutMs === 0;
    return new Promise<GrantedLock | null>((resolve, reject) => {
      const pending = new PendingAcquire(resource, noWait ? this.connectWaitMs : options.waitTimeoutMs, options, tryOnly, this.remover, resolve, reject);
      try {
        if (typeof start === 'function') return start(pending.signal, noWait, pending);
        // A bad name or oversized data fails inside the acquire, so that its onNoLock hears of it too.
        const parent = start.parent ?? this.pathFor(resource, options.zkPath);
        waitInQueue(this.waiters, { parent, driver: start.driver, data: this.dataOf(options), stop: pending.signal, noWait, under: start.under }, pending);
      } catch (error) {
        pending.failed(error);
      }
    });
  }

}

/**
 * One acquire of RecipeRuntime.acquire, as the queue's sink: its Stopper (the caller's timeout and
 * signal) and the caller's promise. A grant becomes a GrantedLock, every failure a typed error.
 */
class PendingAcquire extends Stopper implements QueueSink {
  private done = false;

  constructor(
    private readonly resource: string,
    waitTimeoutMs: number | undefined,
    options: RecipeAcquireOptions,
    private readonly tryOnly: boolean,
    private readonly remover: NodeRemover,
    private readonly resolve: (lock: GrantedLock | null) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    super(waitTimeoutMs, options.signal);
    this.onEnd = options.onEnd;
    this.onNoLock = options.onNoLock;
    this.onReleaseRequest = options.onReleaseRequest;
    this.onWaiting = options.onWaiting;
  }

  /** Kept instead of the caller's options object. */
  private readonly onEnd: ((lock: GrantedLock) => void) | undefined;
  private readonly onNoLock: (() => void) | undefined;
  private readonly onReleaseRequest: 'notify' | 'release' | undefined;
  private readonly onWaiting: (() => void) | undefined;

  waiting(): void {
    if (!this.done) this.onWaiting?.();
  }

  granted(grant: QueueGrant | null): void {
    if (this.done) return;
    if (!grant && !this.tryOnly) return this.failed(new LockTimeoutError(this.resource, 0));
    if (!grant) {
      this.done = true;
      this.dispose();
      this.onNoLock?.();
      this.resolve(null);
      return;
    }
    let lock: GrantedLock;
    try {
      lock = new GrantedLock(this.resource, grant, this.remover, this.onEnd);
    } catch (error) {
      return this.failed(error);
    }
    this.done = true;
    this.dispose();
    if (this.onReleaseRequest) lock.watchForRelease(this.onReleaseRequest);
    this.resolve(lock);
  }

  failed(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.dispose();
    this.onNoLock?.();
    this.reject(this.explain(error, this.resource));
  }
}

/** Accepts either a session source (a recipe on its own) or a runtime shared with other recipes. */
export function runtimeOf(source: SessionSource | RecipeRuntime, options?: RecipeOptions): RecipeRuntime {
  return source instanceof RecipeRuntime ? source : new RecipeRuntime(source, options);
}

/** What every lock type offers. */
export interface LockRecipe {
  /**
   * Waits for the lock.
   * @throws LockTimeoutError, LockAbortedError, InvalidResourceNameError, IncompatibleLockError, LockOperationError
   */
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<LockHandle>;
  /** Takes the lock only if it is free right now; null otherwise. Leaves no node behind either way. */
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<LockHandle | null>;
}

/**
 * How the library itself takes a lock from a recipe (LockService, the cohort, elections): one call,
 * waiting or not (`tryOnly`: null when the lock is taken), resolving the granted node itself.
 */
export interface LockTaker {
  take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<GrantedLock | null>;
}

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
import { explainStop, NEVER, Stopper } from '../queue/stopper.js';
import { waitInQueue } from '../queue/queue-waiter.js';
import { WaiterHost } from '../queue/waiter-host.js';
import { type Candidate, DEFAULT_ROOT_PATH, MAX_NODE_DATA_BYTES, type RecipeAcquireOptions, type RecipeOptions } from './recipe.options.js';

export { DEFAULT_ROOT_PATH, MAX_NODE_DATA_BYTES, type RecipeAcquireOptions, type RecipeOptions };

const EMPTY = Buffer.alloc(0);
/** How many resources' paths a runtime remembers (a hot lock's path is built once, not on every acquire). */
const PATH_CACHE_SIZE = 1024;

/** @throws InvalidOptionsError: `data` is over the cap. */
function refuseData(data: Buffer): never {
  throw new InvalidOptionsError('data', `lock node data is ${data.length} bytes and the limit is ${MAX_NODE_DATA_BYTES}; store a key, not a document`);
}

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
  /** The znodes of recently acquired resources, by name (pathOf). */
  private readonly paths = new Map<string, string>();

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
    let path = this.paths.get(resource);
    if (path === undefined) {
      path = `${this.rootPath}/${encodeResource(resource)}`;
      if (this.paths.size >= PATH_CACHE_SIZE) this.paths.clear();
      this.paths.set(resource, path);
    }
    return path;
  }

  /**
   * The znode of one acquire: its `zkPath` (checked), else the resource's.
   * @throws InvalidResourceNameError for a bad zkPath, or one at or under rootPath: the locks named
   *   by resource live there, and one lock must not have two names.
   */
  pathFor(resource: string, zkPath: string | undefined): string {
    if (zkPath === undefined) return this.pathOf(resource);
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
    if (data.length > MAX_NODE_DATA_BYTES) refuseData(data);
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
      const pending = new PendingAcquire(resource, noWait ? this.connectWaitMs : options.waitTimeoutMs, options, tryOnly, resolve, reject);
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
 * One acquire of RecipeRuntime.acquire, as the queue's sink: the caller's timeout and signal (a
 * Stopper with a timeout; without one, the signal as it is) and the caller's promise. A grant becomes a GrantedLock,
 * every failure a typed error.
 */
class PendingAcquire implements QueueSink {
  private done = false;
  /**
   * Bounds the wait by a timeout: none without one (no object, no call), when the caller's signal,
   * or one that never aborts, is the wait's stop signal as it is.
   */
  private readonly stopper: Stopper | undefined;
  /** What the queue's waiter stops on. */
  readonly signal: AbortSignal;
  /** Kept instead of the caller's options object. */
  private readonly onEnd: ((lock: GrantedLock) => void) | undefined;
  private readonly onNoLock: (() => void) | undefined;
  private readonly onReleaseRequest: 'notify' | 'release' | undefined;
  private readonly candidate: Candidate | undefined;

  constructor(
    private readonly resource: string,
    waitTimeoutMs: number | undefined,
    options: RecipeAcquireOptions,
    private readonly tryOnly: boolean,
    private readonly resolve: (lock: GrantedLock | null) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    const { signal } = options;
    this.stopper = waitTimeoutMs === undefined ? undefined : new Stopper(waitTimeoutMs, signal);
    this.signal = this.stopper?.signal ?? signal ?? NEVER;
    this.onEnd = options.onEnd;
    this.onNoLock = options.onNoLock;
    this.onReleaseRequest = options.onReleaseRequest;
    this.candidate = options.candidate;
  }

  waiting(): void {
    if (!this.done) this.candidate?.waiting();
  }

  granted(grant: QueueGrant | null): void {
    if (this.done) return;
    if (!grant && !this.tryOnly) return this.failed(new LockTimeoutError(this.resource, 0));
    if (!grant) {
      this.done = true;
      this.stopper?.dispose();
      this.onNoLock?.();
      this.resolve(null);
      return;
    }
    let lock: GrantedLock;
    try {
      lock = this.candidate ? this.candidate.term(this.resource, grant) : new GrantedLock(this.resource, grant, undefined, this.onEnd);
    } catch (error) {
      return this.failed(error);
    }
    this.done = true;
    this.stopper?.dispose();
    if (this.onReleaseRequest) lock.watchForRelease(this.onReleaseRequest);
    this.resolve(lock);
  }

  failed(error: unknown): void {
    if (this.done) return;
    this.done = true;
    this.stopper?.dispose();
    this.onNoLock?.();
    this.reject(this.stopper ? this.stopper.explain(error, this.resource) : explainStop(this.signal, undefined, error, this.resource));
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

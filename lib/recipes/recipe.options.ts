import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { GrantedLock } from './granted-lock.js';
import type { QueueGrant } from '../queue/queue.types.js';

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
   * For Candidacy, whose acquires are its terms: told each time the acquire starts waiting behind
   * others (its first term is then decided), and makes the term of the grant.
   * @internal
   */
  candidate?: Candidate;
}

/** What a Candidacy gives its acquires (RecipeAcquireOptions.candidate). @internal */
export interface Candidate {
  waiting(): void;
  /** The handle of the grant: the term, instead of a plain GrantedLock. */
  term(resource: string, grant: QueueGrant): GrantedLock;
}

export const DEFAULT_ROOT_PATH = '/locks';
/** The most a lock node may store about its holder: lock nodes are read by every waiter. */
export const MAX_NODE_DATA_BYTES = 1024;

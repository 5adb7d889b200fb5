import { InvalidOptionsError, LockLostError } from '../errors.js';
import { ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { GrantedLock } from './granted-lock.js';
import type { LockHandle } from './lock-handle.js';
import { rejectOnThrow } from '../shared/promises.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import { ENTRY_KIND } from '../queue/queue-entry.js';
import { downgradeReadDriver, readDriver, writeDriver } from '../queue/lock-driver.js';
import type { SessionSource } from '../queue/queue.types.js';
import { curatorDowngradeDriver, curatorWriteSequence } from '../queue/foreign-drivers.js';
import { QueueLock } from './queue-lock.js';
import { type LockRecipe, type RecipeAcquireOptions, type RecipeOptions, type RecipeRuntime, runtimeOf } from './recipe-runtime.js';

/**
 * The shared read/write lock from ZooKeeper's recipes, in one queue per resource: a read holds when
 * no write is below it and watches only the last write below it; a write holds when it is lowest and
 * watches the node just below it. First come, first served: a queued writer is never overtaken by
 * later readers. Its writes also exclude FairLock holders of the same resource.
 */
export class ReadWriteLock {
  readonly read: LockRecipe;
  readonly write: LockRecipe;
  private readonly downgradeLock: DowngradeLock;

  constructor(connection: ZkConnectionLike, options?: RecipeOptions);
  /** @internal a session source of its own (tests), or a runtime shared with other recipes */
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions);
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    const runtime = runtimeOf(source, options);
    this.read = new QueueLock(runtime, readDriver);
    this.write = new QueueLock(runtime, writeDriver);
    this.downgradeLock = new DowngradeLock(runtime);
  }

  /**
   * A read lock for the holder of `writeLock` (a write or exclusive lock on the same resource, as
   * this library's recipes return it), granted at once. It keeps the write's place: after the write
   * is released, later writers still wait for this read, while readers may join it.
   * @throws LockLostError when the write lock was lost meanwhile; InvalidOptionsError for a handle
   *   no recipe of this library returned.
   */
  downgrade(writeLock: LockHandle, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<LockHandle> {
    return rejectOnThrow(() => {
      if (!(writeLock instanceof GrantedLock)) {
        throw new InvalidOptionsError('writeLock', 'must be a handle returned by ReadWriteLock.write, FairLock or CohortLock of this library');
      }
      return this.downgradeLock.acquireUnder(writeLock, options);
    });
  }
}

/** The read taken under a held write (ReadWriteLock.downgrade), in the write's own queue and session. */
export class DowngradeLock extends QueueLock {
  constructor(runtime: RecipeRuntime) {
    super(runtime, downgradeReadDriver);
  }

  async acquireUnder(writeLock: GrantedLock, options: RecipeAcquireOptions): Promise<GrantedLock> {
    // The read queues in the write's own queue, wherever that is (a resource's, or a zkPath).
    const cut = writeLock.path.lastIndexOf('/');
    const kind = writeLock.path.slice(cut + 1, cut + 3);
    const curatorWrite = curatorWriteSequence(writeLock.path.slice(cut + 1));
    if (
      curatorWrite === undefined &&
      ![ENTRY_KIND.write, ENTRY_KIND.exclusive, ENTRY_KIND.revocableWrite, ENTRY_KIND.revocableExclusive].some((k) => kind === `${k}-`)
    ) {
      throw new InvalidOptionsError(
        'writeLock',
        `downgrade needs a write or exclusive lock of this library's own layout, or a write of the curator layout, got ${writeLock.path}`,
      );
    }
    if (!writeLock.isHeld()) throw lostReason(writeLock);
    // The read stands behind the write's node: its release may neither pass the lock to another
    // caller of this process nor grant it by write in ZooKeeper (the next entry must list, and see the read).
    writeLock.pinNode();
    try {
      const driver = curatorWrite === undefined ? undefined : curatorDowngradeDriver(curatorWrite);
      const lock = await this.take(writeLock.resource, { ...options, waitTimeoutMs: undefined }, false, writeLock, driver, writeLock.path.slice(0, cut));
      if (!writeLock.isHeld() && lock) {
        // The write ended while the read was being created: the read's place is not guaranteed.
        await lock.release().catch(() => undefined);
        throw lostReason(writeLock);
      }
      return lock!;
    } catch (error) {
      if (error instanceof ZkSessionLostError || (error as { cause?: unknown }).cause instanceof ZkSessionLostError) {
        throw lostReason(writeLock);
      }
      throw error;
    }
  }
}

function lostReason(lock: GrantedLock): Error {
  const reason: unknown = lock.signal.reason;
  return reason instanceof LockLostError
    ? reason
    : new LockLostError(lock.resource, lock.fencingToken, 'the write lock was released or lost before the read could be taken under it');
}

import { InvalidOptionsError, LockLostError } from '../errors.js';
import { ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { HeldLock } from './held-lock.js';
import { rejectOnThrow } from '../shared/promises.js';
import { validatePermits } from './lock-kind.js';
import { ENTRY_KIND } from '../queue/queue-entry.js';
import { downgradeReadDriver, exclusiveDriver, type LockDriver, readDriver, semaphoreDriver, writeDriver } from '../queue/lock-driver.js';
import type { SessionSource, UnderWrite } from '../queue/queue.types.js';
import { curatorDowngradeDriver, curatorWriteSequence } from '../queue/foreign-drivers.js';
import { type LockRecipe, type RecipeAcquireOptions, type RecipeOptions, RecipeRuntime, runtimeOf } from './recipe-runtime.js';

/** A lock type made of a queue of sequential nodes and a driver that says who holds. */
export class QueueLock implements LockRecipe {
  protected readonly runtime: RecipeRuntime;

  constructor(
    source: SessionSource | RecipeRuntime,
    private readonly driver: LockDriver,
    options?: RecipeOptions,
  ) {
    this.runtime = runtimeOf(source, options);
  }

  get rootPath(): string {
    return this.runtime.rootPath;
  }

  /** The znode under which a resource's queue lives. */
  pathOf(resource: string): string {
    return this.runtime.pathOf(resource);
  }

  /** The znode of one acquire's queue: its `zkPath` (checked), else the resource's. */
  pathFor(resource: string, zkPath: string | undefined): string {
    return this.runtime.pathFor(resource, zkPath);
  }

  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<HeldLock> {
    return rejectOnThrow(() => this.take(resource, options, false) as Promise<HeldLock>); // never null when not tryOnly
  }

  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<HeldLock | null> {
    return this.take(resource, options, true);
  }

  /**
   * `parent` is given only for a downgrade (the held write's own queue, already checked); `driver`
   * only for Curator's downgrade read.
   */
  protected take(
    resource: string,
    options: RecipeAcquireOptions,
    tryOnly: boolean,
    under?: UnderWrite,
    driver = this.driver,
    parent?: string,
  ): Promise<HeldLock | null> {
    const { runtime } = this;
    // A bad name or oversized data fails inside the acquire, so that its onNoLock hears of it too.
    return runtime.take(resource, options, tryOnly, (stop, noWait, sink) =>
      runtime.queue.start(
        { parent: parent ?? runtime.pathFor(resource, options.zkPath), driver, data: runtime.dataOf(options), stop, tryOnly: noWait, under },
        sink,
      ),
    );
  }
}

/**
 * The fair exclusive lock from ZooKeeper's recipes: EPHEMERAL_SEQUENTIAL nodes under
 * `<rootPath>/<encoded resource>`, the lowest holds, each waiter watches only its predecessor.
 * Needs no Nest: `new FairLock(connection).acquire('orders:42')`.
 */
export class FairLock extends QueueLock {
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    super(source, exclusiveDriver, options);
  }
}

/**
 * The shared read/write lock from ZooKeeper's recipes, in one queue per resource: a read holds when
 * no write is below it and watches only the last write below it; a write holds when it is lowest and
 * watches the node just below it. First come, first served: a queued writer is never overtaken by
 * later readers. Its writes also exclude FairLock holders of the same resource.
 */
export class ReadWriteLock {
  readonly read: QueueLock;
  readonly write: QueueLock;
  private readonly downgradeLock: DowngradeLock;

  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    const runtime = runtimeOf(source, options);
    this.read = new QueueLock(runtime, readDriver);
    this.write = new QueueLock(runtime, writeDriver);
    this.downgradeLock = new DowngradeLock(runtime);
  }

  /**
   * A read lock for the holder of `writeLock` (a write or exclusive lock on the same resource),
   * granted at once. It keeps the write's place: after the write is released, later writers still
   * wait for this read, while readers may join it.
   * @throws LockLostError when the write lock was lost meanwhile.
   */
  downgrade(writeLock: HeldLock, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<HeldLock> {
    return this.downgradeLock.takeUnder(writeLock, options);
  }
}

class DowngradeLock extends QueueLock {
  constructor(runtime: RecipeRuntime) {
    super(runtime, downgradeReadDriver);
  }

  async takeUnder(writeLock: HeldLock, options: RecipeAcquireOptions): Promise<HeldLock> {
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

function lostReason(lock: HeldLock): Error {
  const reason: unknown = lock.signal.reason;
  return reason instanceof LockLostError
    ? reason
    : new LockLostError(lock.resource, lock.fencingToken, 'the write lock was released or lost before the read could be taken under it');
}

/**
 * A fair counting semaphore: up to `permits` holders of a resource at once, first come, first
 * served, and a release wakes only the waiter that may proceed. Every user of one resource must
 * agree on `permits` (IncompatibleLockError otherwise). Leases are ephemeral: they die with their
 * session.
 */
export class Semaphore extends QueueLock {
  constructor(source: SessionSource | RecipeRuntime, options: RecipeOptions & { permits: number }) {
    super(source, semaphoreDriver(validatePermits(options.permits)), options);
  }
}

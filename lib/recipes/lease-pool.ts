/**
 * The semaphores of Apache Curator (`InterProcessSemaphoreV2`) and kazoo (`Semaphore`): a pool of
 * lease nodes, changed only by a client holding the pool's guard lock. Holding the guard, a client
 * adds its lease when the pool has room (or adds it, then counts), waits for a lease to go while
 * the pool is full, and releases the guard once it holds a lease or gives up.
 *
 * - Curator: guard `InterProcessMutex` at `<path>/locks`; leases `<path>/leases/_c_<uuid>-lease-<seq>`
 *   (protected EPHEMERAL_SEQUENTIAL), created first and held while the pool has at most `permits`
 *   of them. The permit count is not stored: every client must be given the same.
 * - kazoo: guard `Lock` at the sibling `<path>-__lock__`; leases `<path>/<uuid hex>` (EPHEMERAL),
 *   created only while fewer than `permits` are there. `<path>` stores max_leases; another number
 *   there is refused. Counting before adding trusts the guard, so our lease is created in one
 *   transaction with a check that our guard node is still there: a guard deleted by force (by hand,
 *   or a revoke) cannot let two clients add at once. (Curator's pool adds, then counts: two adds at
 *   once each see the other, so it needs no such check.)
 *
 * A holder's fencing token is its guard grant's: leases are added one guard holder at a time, so
 * the tokens grow in the order the leases were granted.
 */
import { randomUUID } from 'node:crypto';
import { QueueConflictError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { untilAnswered } from '../zookeeper/session-lifecycle.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import { waitForChange } from '../zookeeper/wait-for-change.js';
import { checkGrant } from '../queue/grant-check.js';
import type { LockDriver } from '../queue/lock-driver.js';
import type { CreateProgress, ProtectedNode } from '../queue/protected-create.js';
import type { QueueGrant } from '../queue/queue.types.js';
import { waitInQueue } from '../queue/queue-waiter.js';
import { curatorMutexDriver, kazooLockDriver } from '../queue/foreign-drivers.js';
import type { GrantedLock } from './granted-lock.js';
import type { LockTaker, RecipeAcquireOptions, RecipeRuntime } from './recipe-runtime.js';

/** Leases and their parents persist until removed, as both clients leave them. */
const LEASE_PARENTS = { parent: 'PERSISTENT', ancestors: 'PERSISTENT' } as const;

/** Where one client's semaphore keeps its guard and leases, and how a lease is added. */
interface PoolLayout {
  readonly guard: LockDriver;
  guardPath(path: string): string;
  leasesPath(path: string): string;
  /** A new lease's name; with `sequential`, ZooKeeper appends the sequence. */
  leaseName(): string;
  readonly sequential: boolean;
  /** The pool path stores the permit count (kazoo's max_leases). */
  readonly storesPermits: boolean;
}

const CURATOR_POOL: PoolLayout = {
  guard: curatorMutexDriver,
  guardPath: (path) => `${path}/locks`,
  leasesPath: (path) => `${path}/leases`,
  leaseName: () => `_c_${randomUUID()}-lease-`,
  sequential: true,
  storesPermits: false,
};

const KAZOO_POOL: PoolLayout = {
  guard: kazooLockDriver,
  guardPath: (path) => `${path}-__lock__`,
  leasesPath: (path) => path,
  leaseName: () => randomUUID().replaceAll('-', ''),
  sequential: false,
  storesPermits: true,
};

/** Our lease node was deleted while the session lives. */
const VANISHED = Symbol('vanished');

export const LEASE_POOLS = { curator: CURATOR_POOL, kazoo: KAZOO_POOL } as const;

/** A semaphore of `permits` leases in a Curator or kazoo lease pool. */
export class LeasePool implements LockTaker {
  constructor(
    private readonly runtime: RecipeRuntime,
    private readonly pool: PoolLayout,
    private readonly permits: number,
  ) {}

  acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<GrantedLock> {
    return this.take(resource, options, false) as Promise<GrantedLock>;
  }

  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<GrantedLock | null> {
    return this.take(resource, options, true);
  }

  take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<GrantedLock | null> {
    const { runtime } = this;
    return runtime.acquire(resource, options, tryOnly, (stop, noWait, sink) => {
      const path = runtime.pathFor(resource, options.zkPath);
      const data = runtime.dataOf(options);
      this.untilLeased(path, data, stop, noWait).then(
        (grant) => sink.granted(grant),
        (error: unknown) => sink.failed(error),
      );
    });
  }

  /** One lease: again in the next session when the session ends before it is held. */
  private async untilLeased(path: string, data: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    for (;;) {
      const guard = await this.acquireGuard(path, data, stop, noWait);
      if (!guard) return null;
      try {
        const lease = await this.addLease(guard, path, data, stop, noWait);
        if (lease !== VANISHED) return lease;
      } catch (error) {
        if (error instanceof ZkSessionLostError && !stop.aborted) continue;
        throw error;
      } finally {
        if (!guard.session.lost.aborted) this.runtime.remover.removeSoon(guard.session, guard.path);
      }
    }
  }

  /** The guard lock, as a raw grant (null: busy and `noWait`). */
  private acquireGuard(path: string, data: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    return new Promise((granted, failed) => {
      waitInQueue(this.runtime.waiters, { parent: this.pool.guardPath(path), driver: this.pool.guard, data, stop, noWait }, { granted, failed });
    });
  }

  /** Holding the guard: adds our lease when the pool has room, waiting while it is full. */
  private async addLease(guard: QueueGrant, path: string, data: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null | typeof VANISHED> {
    const { session } = guard;
    const { pool, permits, runtime } = this;
    const leases = pool.leasesPath(path);
    if (pool.storesPermits) await this.checkStoredPermits(session, path, stop);
    // A pool that counts before it adds (kazoo's) creates its lease only while our guard node is there.
    const node: ProtectedNode = {
      parent: leases,
      name: pool.leaseName(),
      data,
      mode: pool.sequential ? 'EPHEMERAL_SEQUENTIAL' : 'EPHEMERAL',
      parents: LEASE_PARENTS,
      whileExists: pool.sequential ? undefined : guard.path,
    };
    const progress: CreateProgress = { createSent: false, mine: undefined };
    let lease: string | undefined;
    try {
      if (pool.sequential) {
        const added = await this.createLease(session, node, progress, stop);
        if (added === VANISHED) return VANISHED;
        lease = added;
      }
      for (;;) {
        const { children } = await readChildren(session, leases, stop);
        if (lease === undefined && children.length < permits) {
          const added = await this.createLease(session, node, progress, stop);
          if (added === VANISHED) return VANISHED; // our guard is gone: take it again
          lease = added;
        }
        if (lease !== undefined) {
          const name = lease.slice(leases.length + 1);
          if (!children.includes(name) && pool.sequential) return VANISHED; // deleted by hand: start again, as Curator does
          if (!pool.sequential || children.length <= permits) {
            // Granted in the instant the caller gave up, or after the lease ran out: hand it back.
            const check = checkGrant(session, stop);
            if (check === 'stopped') throw stop.reason;
            if (check === 'session-ended') throw session.lost.reason;
            return { session, path: lease, token: guard.token, queueId: guard.queueId };
          }
        }
        if (noWait) {
          if (lease !== undefined) await runtime.remover.remove(session, lease);
          return null;
        }
        // Under the guard nobody adds a lease: a lease going is the only change to wait for.
        const others = children.filter((child) => `${leases}/${child}` !== lease).map((child) => `${leases}/${child}`);
        await waitForChange(session, others, stop);
      }
    } catch (error) {
      await runtime.creator.abandon(session, node, progress);
      throw error;
    }
  }

  /** Our lease, by the protected create; VANISHED when the guard it was to be created under is gone. */
  private async createLease(session: ZkSessionApi, node: ProtectedNode, progress: CreateProgress, stop: AbortSignal): Promise<string | typeof VANISHED> {
    const created = await this.runtime.creator.create(session, node, progress, stop);
    if (created.outcome !== 'created') return VANISHED;
    progress.mine = created.path.slice(node.parent.length + 1); // known, adopted or not: given back by name
    return created.path;
  }

  /** kazoo's max_leases in the pool path's data: written when we create the path, refused when another number is there. */
  private async checkStoredPermits(session: ZkSessionApi, path: string, stop: AbortSignal): Promise<void> {
    const { permits } = this;
    let data = (await readNode(session, path, stop))?.data;
    if (!data) {
      if (await this.runtime.parents.ensure(session, path, LEASE_PARENTS, stop, String(permits))) return;
      ({ data } = await untilAnswered(session, stop, () => session.getData(path)));
    }
    const text = data.toString('utf8').trim();
    if (/^[+-]?\d+$/.test(text) && Number(text) !== permits) {
      throw new QueueConflictError(
        `kazoo's Semaphore on this path allows ${Number(text)} leases (max_leases, stored in ${path}) and this semaphore asks for ${permits} permits; ` +
          'every user of one semaphore must give the same number',
      );
    }
  }
}

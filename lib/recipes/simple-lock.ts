import { QueueConflictError, ZkNoNodeError, ZkNotEmptyError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { GrantedLock } from './granted-lock.js';
import type { LockHandle } from './lock-handle.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import type { QueueGrant, SessionSource } from '../queue/queue.types.js';
import { type LockRecipe, type RecipeAcquireOptions, type RecipeOptions, type RecipeRuntime, runtimeOf } from './recipe-runtime.js';
import { checkGrant } from '../queue/grant-check.js';
import type { CreateProgress, ProtectedNode } from '../queue/protected-create.js';
import { waitForChange } from '../zookeeper/wait-for-change.js';

let nonce = 0;

/** The simple lock's node sits in rootPath (or a zkPath's parent), which persists. */
const SIMPLE_PARENTS = { parent: 'PERSISTENT', ancestors: 'PERSISTENT' } as const;

/**
 * The simplest exclusive lock: every contender creates the same EPHEMERAL node,
 * `<rootPath>/<encoded resource>`; whoever creates it holds, the others watch it and try again when
 * it goes. Not fair (any waiter may win) and a release wakes every waiter (the herd), but there is
 * no queue parent to create and reap, which makes a first or occasional lock of a name cheaper.
 * Meant for locks that are rarely contended. It cannot share a resource with the queue-based
 * recipes: each side detects the other and fails with IncompatibleLockError.
 *
 * The node is made by the protected create (protected-create.ts): its data starts with a line
 * naming the acquire that created it (the marker), so a create whose reply was lost is recognised
 * and adopted. The fencing token is the node's creation zxid, read in the same round trip as the
 * create.
 */
export class SimpleLock implements LockRecipe {
  private readonly runtime: RecipeRuntime;

  constructor(connection: ZkConnectionLike, options?: RecipeOptions);
  /** @internal a session source of its own (tests), or a runtime shared with other recipes */
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions);
  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    this.runtime = runtimeOf(source, options);
  }

  // The library's own code and tests get the granted node itself; users, as the published types say, a LockHandle.
  /** @internal */
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<GrantedLock>;
  acquire(resource: string, options?: RecipeAcquireOptions): Promise<LockHandle>;
  async acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<GrantedLock> {
    return (await this.take(resource, options, false))!;
  }

  /** @internal */
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<GrantedLock | null>;
  tryAcquire(resource: string, options?: Omit<RecipeAcquireOptions, 'waitTimeoutMs'>): Promise<LockHandle | null>;
  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<GrantedLock | null> {
    return this.take(resource, options, true);
  }

  /** @internal LockTaker: how LockService takes it */
  take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<GrantedLock | null> {
    const path = this.runtime.pathFor(resource, options.zkPath);
    const data = this.runtime.dataOf(options);
    return this.runtime.acquire(resource, options, tryOnly, (stop, noWait, sink) => {
      this.untilGranted(path, data, stop, noWait).then(
        (grant) => sink.granted(grant),
        (error: unknown) => sink.failed(error),
      );
    });
  }

  /** Waits for the node: one acquire, trying again in the next session after a session loss. */
  private async untilGranted(path: string, data: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    for (;;) {
      const { live } = this.runtime.sessions; // a field: no call while the session lives (SessionSource.live)
      const session = live && !live.lost.aborted ? live : await this.runtime.sessions.session(stop);
      try {
        const grant = await this.attempt(session, path, data, stop, noWait);
        switch (grant && checkGrant(session, stop)) {
          case 'session-ended':
            continue; // granted, then the session ended or its lease ran out: its node is gone
          case 'stopped':
            this.runtime.remover.removeSoon(session, grant!.path); // granted as the caller gave up
            throw stop.reason;
        }
        return grant;
      } catch (error) {
        if (stop.aborted) throw stop.reason;
        if (error instanceof ZkSessionLostError) continue;
        throw error;
      }
    }
  }

  /** One attempt in one session: the node, null (busy and `noWait`), or an error. */
  private async attempt(session: ZkSessionApi, path: string, userData: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
    const marker = `${session.id}-${nonce.toString(36)}\n`;
    const cut = path.lastIndexOf('/');
    const node: ProtectedNode = {
      parent: path.slice(0, cut),
      name: path.slice(cut + 1),
      data: Buffer.concat([Buffer.from(marker), userData]),
      mode: 'EPHEMERAL',
      parents: SIMPLE_PARENTS,
      marker,
      readBack: 'node',
    };
    const progress: CreateProgress = { createSent: false, mine: undefined };
    try {
      for (;;) {
        const created = await this.runtime.creator.create(session, node, progress, stop);
        if (created.outcome === 'created') {
          // Our node went between the create and the read: only the session's end deletes it.
          if (!created.node) throw session.lost.reason ?? new ZkSessionLostError('getData', path);
          // (checked against the servers' history by the protected create)
          return { session, path, token: { epoch: this.runtime.tokenEpoch, queueZxid: created.node.stat.czxid }, queueId: '' };
        }
        const holder = created.outcome === 'taken' ? created.holder : null;
        if (holder && holder.stat.ephemeralOwner === '0') {
          await this.clearQueueParent(session, path, holder);
          continue;
        }
        if (noWait && holder) return null;
        await waitForChange(session, [path], stop);
      }
    } catch (error) {
      await this.runtime.creator.abandon(session, node, progress);
      throw error;
    }
  }

  /**
   * The name is a queue-based lock's parent. An empty one (waiting to be reaped) is deleted so the
   * simple lock can take the name; one with entries means both kinds are in use.
   */
  private async clearQueueParent(session: ZkSessionApi, path: string, node: NodeData): Promise<void> {
    // Only a queue parent that has had lock nodes and has none now: never an empty node of another
    // kind (say, another service's rootPath) that happens to have the same name.
    if (node.stat.numChildren === 0 && node.stat.cversion > 0 && node.data.length === 0) {
      try {
        await session.delete(path);
        return;
      } catch (error) {
        if (error instanceof ZkNoNodeError) return;
        if (!(error instanceof ZkNotEmptyError)) throw error;
      }
    }
    throw new QueueConflictError(
      'its node is a queue-based lock (fair, read/write or semaphore) in use, or a node that is not a lock, so the simple lock cannot take it',
    );
  }
}

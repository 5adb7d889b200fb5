import { ZkConnectionLossError, ZkNoNodeError, ZkNodeExistsError, ZkNotEmptyError, ZkRolledBackError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { HeldLock } from './held-lock.js';
import { IncompatibleQueueError } from '../zookeeper/zk-errors.js';
import type { QueueGrant, SessionSource } from '../queue/queue.types.js';
import { type LockRecipe, type RecipeAcquireOptions, type RecipeOptions, type RecipeRuntime, runtimeOf } from './recipe-runtime.js';
import { simpleToken } from '../queue/fencing-token.js';
import { readNode } from '../zookeeper/session-retry.js';
import { waitForChange } from '../zookeeper/wait-for-change.js';

let nonce = 0;

/**
 * The simplest exclusive lock: every contender creates the same EPHEMERAL node,
 * `<rootPath>/<encoded resource>`; whoever creates it holds, the others watch it and try again when
 * it goes. Not fair (any waiter may win) and a release wakes every waiter (the herd), but there is
 * no queue parent to create and reap, which makes a first or occasional lock of a name cheaper.
 * Meant for locks that are rarely contended. It cannot share a resource with the queue-based
 * recipes: each side detects the other and fails with IncompatibleLockError.
 *
 * The node's data starts with a line naming the acquire that created it, so a create whose reply
 * was lost is recognised and adopted. The fencing token is the node's creation zxid, read in the
 * same round trip as the create.
 */
export class SimpleLock implements LockRecipe {
  private readonly runtime: RecipeRuntime;

  constructor(source: SessionSource | RecipeRuntime, options?: RecipeOptions) {
    this.runtime = runtimeOf(source, options);
  }

  async acquire(resource: string, options: RecipeAcquireOptions = {}): Promise<HeldLock> {
    return (await this.take(resource, options, false))!;
  }

  tryAcquire(resource: string, options: Omit<RecipeAcquireOptions, 'waitTimeoutMs'> = {}): Promise<HeldLock | null> {
    return this.take(resource, options, true);
  }

  private take(resource: string, options: RecipeAcquireOptions, tryOnly: boolean): Promise<HeldLock | null> {
    const path = this.runtime.pathFor(resource, options.zkPath);
    const data = this.runtime.dataOf(options);
    return this.runtime.take(resource, options, tryOnly, (stop, noWait, sink) => {
      this.grab(path, data, stop, noWait).then(
        (grant) => sink.granted(grant),
        (error: unknown) => sink.failed(error),
      );
    });
  }

  /** Waits for the node: one acquire, queueing again in the next session after a session loss. */
  private async grab(path: string, data: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    for (;;) {
      const session = await this.runtime.sessions.session(stop);
      try {
        const grant = await this.acquireIn(session, path, data, stop, noWait);
        if (grant?.session.lost.aborted) continue;
        if (grant && stop.aborted) {
          this.runtime.remover.removeSoon(session, grant.path);
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

  private async acquireIn(session: ZkSessionApi, path: string, userData: Buffer, stop: AbortSignal, noWait: boolean): Promise<QueueGrant | null> {
    nonce = (nonce + 1) % Number.MAX_SAFE_INTEGER;
    const marker = `${session.id}-${nonce.toString(36)}\n`;
    const data = Buffer.concat([Buffer.from(marker), userData]);
    const isOurs = (node: NodeData | null): boolean => node !== null && node.data.subarray(0, marker.length).toString() === marker;
    // Every node with our marker is created after this: its zxid is above every zxid seen so far,
    // unless the server's history went back.
    const floor = session.highestZxid;
    const grantOf = (node: NodeData): QueueGrant => {
      if (node.stat.czxid < floor) throw new ZkRolledBackError(path, floor, node.stat.czxid);
      // Found after the session's lease ran out: the session is ended, and the acquire queues again.
      if (!session.checkLease()) throw session.lost.reason as Error;
      return { session, path, fencingToken: simpleToken(this.runtime.queue.tokenEpoch, node.stat.czxid), queueId: '' };
    };
    let createSent = false;
    try {
      for (;;) {
        if (!session.connected) await session.whenConnected(stop);
        createSent = true;
        const created = session.create(path, data, 'EPHEMERAL', this.runtime.acl);
        // Sent with the create, answered right after it: our node's zxid on success, the holder on failure.
        const read = session.getData(path).then(
          (node) => node,
          () => null,
        );
        try {
          await created;
        } catch (error) {
          let node = await read;
          if (error instanceof ZkNoNodeError) {
            createSent = false;
            await this.runtime.queue.ensureRoot(session, stop);
            continue;
          }
          if (error instanceof ZkConnectionLossError) {
            const now = await readNode(session, path, stop);
            if (now && isOurs(now)) return grantOf(now);
            continue;
          }
          if (!(error instanceof ZkNodeExistsError)) throw error;
          // The read sent with the create failed (a dropped connection): read the holder again.
          node ??= await readNode(session, path, stop);
          if (node && isOurs(node)) return grantOf(node); // an earlier create of ours, whose reply was lost
          createSent = false;
          if (node && node.stat.ephemeralOwner === '0') {
            await this.clearQueueParent(session, path, node);
            continue;
          }
          if (noWait && node) return null;
          await waitForChange(session, [path], stop);
          continue;
        }
        const node = (await read) ?? (await readNode(session, path, stop));
        if (node && isOurs(node)) return grantOf(node);
        // Our node went between the create and the read: only the session's end deletes it.
        throw session.lost.reason ?? new ZkSessionLostError('getData', path);
      }
    } catch (error) {
      if (createSent && !session.lost.aborted) this.removeIfOurs(session, path, isOurs);
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
    throw new IncompatibleQueueError(
      'its node is a queue-based lock (fair, read/write or semaphore) in use, or a node that is not a lock, so the simple lock cannot take it',
    );
  }

  /** After giving up with a create of unknown outcome: delete the node if it turns out to be ours. */
  private removeIfOurs(session: ZkSessionApi, path: string, isOurs: (node: NodeData | null) => boolean): void {
    const run = async (): Promise<void> => {
      const node = await readNode(session, path, undefined);
      if (isOurs(node)) await this.runtime.remover.remove(session, path);
    };
    run().catch((error: unknown) => {
      if (!(error instanceof ZkSessionLostError)) this.runtime.remover.report(error);
    });
  }
}

import { ZkConnectionLossError, ZkNoNodeError, ZkNodeExistsError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import type { ChildList, ZkSessionApi } from '../zookeeper/zk-session.js';
import type { LockDriver } from './lock-driver.js';
import { nodePrefix, sortQueue } from './queue-entry.js';

/** Where the queue gets its session: ZkConnection, or a fake in unit tests. */
export interface SessionSource {
  session(signal?: AbortSignal): Promise<ZkSessionApi>;
}

/** A granted place at the head of a queue. */
export interface QueueGrant {
  readonly session: ZkSessionApi;
  /** Full path of the lock node this grant owns. */
  readonly path: string;
  /**
   * The parent's pzxid in the listing that granted the lock, as 20 zero-padded decimal digits.
   * A grant is only seen after the previous holder's node was deleted, and every delete raises the
   * parent's pzxid, so tokens only grow for a resource: across holders, sessions, and re-creations of
   * the parent (a new node's zxid exceeds every earlier one), unlike sequence numbers.
   */
  readonly fencingToken: string;
}

export interface QueueRequest {
  /** Parent of the queue's nodes: `<rootPath>/<encoded resource>`. */
  readonly parent: string;
  readonly driver: LockDriver;
  /** Small description of the acquirer, stored in its node. */
  readonly data: Buffer;
  /** Aborts waiting (the caller's timeout or signal). The reason is rethrown. */
  readonly stop: AbortSignal;
  /** Give up at once when the lock is not free (tryAcquire). */
  readonly tryOnly: boolean;
}

/**
 * The queue mechanics every lock type shares (Curator's LockInternals): enqueue one
 * EPHEMERAL_SEQUENTIAL node, list, ask the driver, watch one predecessor, re-list when it changes,
 * and remove the node on every way out that is not a grant.
 */
export class LockQueue {
  private readonly rootAncestors: string[];
  constructor(
    private readonly sessions: SessionSource,
    rootPath: string,
    /** Failures of clean-up that runs after the caller was already answered. */
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
  ) {
    this.rootAncestors = pathPrefixes(rootPath);
  }

  /**
   * Waits for the head of the queue. A session lost while waiting only means the node died with it:
   * the request queues again in the next session. Resolves null only for `tryOnly`.
   * Rejects with `stop.reason` when stopped, having removed its node (or scheduled the removal when
   * disconnected).
   */
  async acquire(request: QueueRequest): Promise<QueueGrant | null> {
    for (;;) {
      const session = await this.sessions.session(request.stop);
      try {
        const grant = await this.acquireIn(session, request);
        if (grant?.session.lost.aborted) continue; // granted, then the session ended: the node is gone
        return grant;
      } catch (error) {
        if (error instanceof ZkSessionLostError && !request.stop.aborted) continue;
        throw error;
      }
    }
  }

  /**
   * Deletes a node, retrying through connection loss. Resolves once the delete is confirmed, the
   * node is found already gone, or the session (and so the node) is gone.
   */
  async remove(session: ZkSessionApi, path: string): Promise<void> {
    for (;;) {
      try {
        if (!session.connected) await session.whenConnected();
        await session.delete(path);
        return;
      } catch (error) {
        if (error instanceof ZkNoNodeError || error instanceof ZkSessionLostError) return;
        if (error instanceof ZkConnectionLossError) continue;
        throw error;
      }
    }
  }

  private async acquireIn(session: ZkSessionApi, request: QueueRequest): Promise<QueueGrant | null> {
    const { parent, driver, stop } = request;
    const prefix = nodePrefix(driver.kind, session.id);
    let mine: string | undefined;
    try {
      let list: ChildList;
      ({ name: mine, list } = await this.enqueue(session, request, prefix));
      for (;;) {
        const queue = sortQueue(list.children);
        const index = queue.findIndex((entry) => entry.name === mine);
        if (index < 0) {
          // Our node vanished while the session lives: deleted by hand, or its parent re-created.
          mine = undefined;
          ({ name: mine, list } = await this.enqueue(session, request, prefix));
          continue;
        }
        const decision = driver.decide(queue, index);
        if (decision.granted) {
          return { session, path: `${parent}/${mine}`, fencingToken: formatToken(list.stat.pzxid) };
        }
        if (request.tryOnly) {
          const path = `${parent}/${mine}`;
          mine = undefined;
          await this.remove(session, path);
          return null;
        }
        await this.waitForChange(session, `${parent}/${decision.watch.name}`, stop);
        list = await this.readChildren(session, parent, stop);
      }
    } catch (error) {
      if (mine !== undefined && !session.lost.aborted) {
        const path = `${parent}/${mine}`;
        if (session.connected) await this.remove(session, path).catch(this.onBackgroundError);
        else this.remove(session, path).catch(this.onBackgroundError);
      }
      throw error;
    }
  }

  /**
   * Creates our node and lists the queue, both sent at once: ZooKeeper answers one session's
   * requests in order, so the listing already contains our node and the uncontended path costs one
   * round trip. After a connection loss the create's outcome is unknown: look for our prefix, adopt
   * the node if it is there, create it again otherwise.
   */
  private async enqueue(
    session: ZkSessionApi,
    request: QueueRequest,
    prefix: string,
  ): Promise<{ name: string; list: ChildList }> {
    const { parent, data, stop } = request;
    for (;;) {
      if (!session.connected) await this.whenConnectedOrCleanUp(session, parent, prefix, stop);
      const created = session.create(`${parent}/${prefix}`, data, 'EPHEMERAL_SEQUENTIAL');
      const listed = session.getChildren(parent).then(
        (list) => ({ list }),
        (error: unknown) => ({ error }),
      );
      let path: string;
      try {
        path = await created;
      } catch (error) {
        await listed;
        if (error instanceof ZkNoNodeError) {
          await this.ensureParent(session, parent);
          continue;
        }
        if (!(error instanceof ZkConnectionLossError)) throw error;
        await this.whenConnectedOrCleanUp(session, parent, prefix, stop);
        const list = await this.readChildren(session, parent, undefined);
        const adopted = list.children.find((child) => child.startsWith(prefix));
        if (adopted) return { name: adopted, list };
        continue;
      }
      const name = path.slice(parent.length + 1);
      const result = await listed;
      if ('list' in result) return { name, list: result.list };
      return { name, list: await this.readChildren(session, parent, undefined) };
    }
  }

  /**
   * Waits for the connection to come back. If the caller stops meanwhile, a create may have
   * reached the server unseen: remove any node with our prefix once connected, in the background.
   */
  private async whenConnectedOrCleanUp(session: ZkSessionApi, parent: string, prefix: string, stop: AbortSignal) {
    try {
      await session.whenConnected(stop);
    } catch (error) {
      if (stop.aborted && !session.lost.aborted) {
        this.removeByPrefix(session, parent, prefix).catch(this.onBackgroundError);
      }
      throw error;
    }
  }

  private async removeByPrefix(session: ZkSessionApi, parent: string, prefix: string): Promise<void> {
    try {
      await session.whenConnected();
      const { children } = await this.readChildren(session, parent, undefined);
      await Promise.all(children.filter((c) => c.startsWith(prefix)).map((c) => this.remove(session, `${parent}/${c}`)));
    } catch (error) {
      if (!(error instanceof ZkSessionLostError)) throw error;
    }
  }

  /** Lists the queue, retrying through connection loss. A missing parent is an empty queue. */
  private async readChildren(session: ZkSessionApi, parent: string, stop: AbortSignal | undefined): Promise<ChildList> {
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      try {
        return await session.getChildren(parent);
      } catch (error) {
        if (error instanceof ZkNoNodeError) return { children: [], stat: EMPTY_STAT };
        if (!(error instanceof ZkConnectionLossError)) throw error;
      }
    }
  }

  /**
   * Resolves when the watched node changes or is gone (or the connection dropped: re-listing after
   * reconnecting tells what happened). Rejects on stop or session loss.
   */
  private async waitForChange(session: ZkSessionApi, path: string, stop: AbortSignal): Promise<void> {
    if (!session.connected) await session.whenConnected(stop);
    stop.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const slot: { wake?: () => void } = {};
      const finish = (error?: unknown): void => {
        slot.wake = undefined;
        stop.removeEventListener('abort', onStop);
        session.lost.removeEventListener('abort', onLost);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onStop = (): void => finish(stop.reason);
      const onLost = (): void => finish(session.lost.reason);
      slot.wake = () => finish();
      stop.addEventListener('abort', onStop, { once: true });
      session.lost.addEventListener('abort', onLost, { once: true });
      session.watchNode(path, () => slot.wake?.()).then(
        (exists) => {
          if (!exists) slot.wake?.();
        },
        (error: unknown) => {
          if (error instanceof ZkConnectionLossError) slot.wake?.();
          else if (slot.wake) finish(error);
        },
      );
    });
  }

  /** Creates rootPath (persistent) and the lock's parent (a container, reaped by ZooKeeper when empty). */
  private async ensureParent(session: ZkSessionApi, parent: string): Promise<void> {
    for (const path of this.rootAncestors) await this.createIfMissing(session, path, 'PERSISTENT');
    await this.createIfMissing(session, parent, 'CONTAINER');
  }

  private async createIfMissing(session: ZkSessionApi, path: string, mode: 'PERSISTENT' | 'CONTAINER'): Promise<void> {
    for (;;) {
      try {
        if (!session.connected) await session.whenConnected();
        await session.create(path, '', mode);
        return;
      } catch (error) {
        if (error instanceof ZkNodeExistsError) return;
        if (!(error instanceof ZkConnectionLossError)) throw error;
      }
    }
  }
}

const EMPTY_STAT = {
  czxid: 0,
  mzxid: 0,
  pzxid: 0,
  version: 0,
  cversion: 0,
  numChildren: 0,
  dataLength: 0,
  ephemeralOwner: '0',
};

/** 20 digits hold any 64-bit zxid, so the token compares correctly as a string and as a BigInt. */
export function formatToken(zxid: number): string {
  return zxid.toString().padStart(20, '0');
}

import { ZkConnectionLossError, ZkNoNodeError, ZkNodeExistsError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import type { ChildList, ZkSessionApi } from '../zookeeper/zk-session.js';
import type { LockDriver } from './lock-driver.js';
import { nodePrefix, sortQueue } from './queue-entry.js';

/** Where the queue gets its session: ZkConnection, or a fake in unit tests. */
export interface SessionSource {
  session(signal?: AbortSignal): Promise<ZkSessionApi>;
}

/** What one acquire attempt in one session knows about its node. */
interface Attempt {
  /** `<kind>-<session id>-<nonce>-`: every node this attempt creates starts with it. */
  readonly prefix: string;
  /** Our node's name, once known. */
  mine: string | undefined;
  /** A create was sent whose node may exist even though its name is unknown. */
  createSent: boolean;
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
    const { stop } = request;
    for (;;) {
      const session = await this.sessions.session(stop);
      let grant: QueueGrant | null;
      try {
        grant = await this.acquireIn(session, request);
      } catch (error) {
        if (stop.aborted) throw stop.reason; // whatever else went wrong, the caller stopped first
        if (error instanceof ZkSessionLostError) continue; // our node died with the session: queue again
        throw error;
      }
      if (grant?.session.lost.aborted) continue; // granted, then the session ended: the node is gone
      if (grant && stop.aborted) {
        // Granted in the same instant the caller gave up: hand the lock straight back.
        this.removeSoon(session, grant.path);
        throw stop.reason;
      }
      return grant;
    }
  }

  /**
   * Deletes a node, retrying through connection loss. Resolves once the delete is confirmed, the
   * node is found already gone, or the session (and so the node) is gone.
   */
  async remove(session: ZkSessionApi, path: string): Promise<void> {
    try {
      await untilAnswered(session, undefined, () => session.delete(path));
    } catch (error) {
      if (!(error instanceof ZkNoNodeError || error instanceof ZkSessionLostError)) throw error;
    }
  }

  private async acquireIn(session: ZkSessionApi, request: QueueRequest): Promise<QueueGrant | null> {
    const { parent, driver, stop } = request;
    const attempt: Attempt = { prefix: nodePrefix(driver.kind, session.id), mine: undefined, createSent: false };
    try {
      let list = await this.enqueue(session, request, attempt);
      for (;;) {
        const queue = sortQueue(list.children);
        const ours = queue.filter((entry) => entry.name.startsWith(attempt.prefix));
        if (ours.length === 0) {
          // Our node vanished while the session lives: deleted by hand, or its parent re-created.
          attempt.mine = undefined;
          list = await this.enqueue(session, request, attempt);
          continue;
        }
        // A create retried after a lost reply can leave two nodes of ours (the first one applied
        // late on another server): the lowest is our place, the others must go, or we wait on ourselves.
        attempt.mine = ours[0]!.name;
        for (const extra of ours.slice(1)) this.removeSoon(session, `${parent}/${extra.name}`);
        const effective = ours.length > 1 ? queue.filter((entry) => !ours.includes(entry) || entry === ours[0]) : queue;
        const decision = driver.decide(effective, effective.indexOf(ours[0]!));
        if (decision.granted) {
          return { session, path: `${parent}/${attempt.mine}`, fencingToken: formatToken(list.stat.pzxid) };
        }
        if (request.tryOnly) {
          const path = `${parent}/${attempt.mine}`;
          attempt.mine = undefined;
          attempt.createSent = false;
          await this.remove(session, path);
          return null;
        }
        await this.waitForChange(session, `${parent}/${decision.watch.name}`, stop);
        list = await this.readChildren(session, parent, stop);
      }
    } catch (error) {
      if (!session.lost.aborted) {
        if (attempt.mine !== undefined) await this.removeBounded(session, `${parent}/${attempt.mine}`);
        else if (attempt.createSent) this.removeByPrefix(session, parent, attempt.prefix).catch(this.onBackgroundError);
      }
      throw error;
    }
  }

  /**
   * Creates our node and lists the queue, both sent at once: ZooKeeper answers one session's
   * requests in order, so the listing already contains our node and the uncontended path costs one
   * round trip. After a connection loss the create's outcome is unknown: the listing after
   * reconnecting tells (acquireIn adopts any node carrying our prefix), so it is only created again
   * when none is there.
   */
  private async enqueue(session: ZkSessionApi, request: QueueRequest, attempt: Attempt): Promise<ChildList> {
    const { parent, data, stop } = request;
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      attempt.createSent = true;
      const created = session.create(`${parent}/${attempt.prefix}`, data, 'EPHEMERAL_SEQUENTIAL');
      const listed = session.getChildren(parent).then(
        (list) => ({ list }),
        (error: unknown) => ({ error }),
      );
      try {
        const path = await created;
        attempt.mine = path.slice(parent.length + 1);
      } catch (error) {
        await listed;
        if (error instanceof ZkNoNodeError) {
          attempt.createSent = false; // refused: nothing was created
          await this.ensureParent(session, parent, stop);
          continue;
        }
        if (!(error instanceof ZkConnectionLossError)) throw error;
        const list = await this.readChildren(session, parent, stop);
        if (list.children.some((child) => child.startsWith(attempt.prefix))) return list;
        continue;
      }
      const result = await listed;
      return 'list' in result ? result.list : this.readChildren(session, parent, stop);
    }
  }

  /**
   * Deletes a node the caller is giving up. The caller waits for one attempt while connected (so a
   * timed-out acquire has cleaned up when it rejects); anything longer goes on in the background.
   */
  private async removeBounded(session: ZkSessionApi, path: string): Promise<void> {
    if (session.connected) {
      try {
        await session.delete(path);
        return;
      } catch (error) {
        if (error instanceof ZkNoNodeError || error instanceof ZkSessionLostError) return;
        if (!(error instanceof ZkConnectionLossError)) {
          this.onBackgroundError(error);
          return;
        }
      }
    }
    this.removeSoon(session, path);
  }

  private removeSoon(session: ZkSessionApi, path: string): void {
    this.remove(session, path).catch(this.onBackgroundError);
  }

  private async removeByPrefix(session: ZkSessionApi, parent: string, prefix: string): Promise<void> {
    try {
      const { children } = await this.readChildren(session, parent, undefined);
      await Promise.all(children.filter((c) => c.startsWith(prefix)).map((c) => this.remove(session, `${parent}/${c}`)));
    } catch (error) {
      if (!(error instanceof ZkSessionLostError)) throw error;
    }
  }

  /** Lists the queue, retrying through connection loss. A missing parent is an empty queue. */
  private readChildren(session: ZkSessionApi, parent: string, stop: AbortSignal | undefined): Promise<ChildList> {
    return untilAnswered(session, stop, () =>
      session.getChildren(parent).catch((error: unknown) => {
        if (error instanceof ZkNoNodeError) return { children: [], stat: EMPTY_STAT };
        throw error;
      }),
    );
  }

  /**
   * Resolves when the watched node changes or is gone (or the connection dropped: re-listing after
   * reconnecting tells what happened). Rejects on stop or session loss.
   */
  private async waitForChange(session: ZkSessionApi, path: string, stop: AbortSignal): Promise<void> {
    if (!session.connected) await session.whenConnected(stop);
    stop.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        watch.cancel();
        stop.removeEventListener('abort', onStop);
        session.lost.removeEventListener('abort', onLost);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onStop = (): void => finish(stop.reason);
      const onLost = (): void => finish(session.lost.reason);
      stop.addEventListener('abort', onStop, { once: true });
      session.lost.addEventListener('abort', onLost, { once: true });
      const watch = session.watchNode(path, () => finish());
      watch.armed.then(
        (exists) => {
          if (!exists) finish();
        },
        // A dropped connection: re-listing after reconnecting tells what happened.
        (error: unknown) => finish(error instanceof ZkConnectionLossError ? undefined : error),
      );
    });
  }

  /** Creates rootPath (persistent) and the lock's parent (a container, reaped by ZooKeeper when empty). */
  private async ensureParent(session: ZkSessionApi, parent: string, stop: AbortSignal): Promise<void> {
    for (const path of this.rootAncestors) await this.createIfMissing(session, path, 'PERSISTENT', stop);
    await this.createIfMissing(session, parent, 'CONTAINER', stop);
  }

  private createIfMissing(session: ZkSessionApi, path: string, mode: 'PERSISTENT' | 'CONTAINER', stop: AbortSignal): Promise<void> {
    return untilAnswered(session, stop, () =>
      session.create(path, '', mode).then(
        () => undefined,
        (error: unknown) => {
          if (!(error instanceof ZkNodeExistsError)) throw error;
        },
      ),
    );
  }
}

/**
 * Runs a request until it gets an answer: after each connection loss, waits for the connection to
 * come back (or `stop`, or the session's end) and sends it again. Only for requests that are safe
 * to repeat.
 */
async function untilAnswered<T>(session: ZkSessionApi, stop: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
  for (;;) {
    if (!session.connected) await session.whenConnected(stop);
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof ZkConnectionLossError)) throw error;
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

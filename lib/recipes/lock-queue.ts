import { ZkConnectionLossError, ZkNoChildrenForEphemeralsError, ZkNoNodeError, ZkNodeExistsError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ChildList, ZkSessionApi } from '../zookeeper/zk-session.js';
import { IncompatibleQueueError, type LockDriver } from './lock-driver.js';
import type { NodeRemover } from './node-remover.js';
import { nodePrefix, sortQueue } from './queue-entry.js';
import { formatToken, readChildren, untilAnswered } from './session-retry.js';
import { waitForChange } from './wait-for-change.js';

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

/** A granted lock node. */
export interface QueueGrant {
  readonly session: ZkSessionApi;
  /** Full path of the lock node this grant owns. */
  readonly path: string;
  /**
   * A zxid that grows with every grant of the resource, as 20 zero-padded digits. For a queue, the
   * parent's pzxid in the listing that granted the lock: a grant is only seen after the previous
   * holder's node was deleted, and every delete raises the parent's pzxid, so tokens only grow:
   * across holders, sessions, and re-creations of the parent (a new node's zxid exceeds every earlier
   * one), unlike sequence numbers.
   */
  readonly fencingToken: string;
  /**
   * Which incarnation of the queue granted it: the parent's czxid (a reaped and re-created parent
   * restarts its sequence numbers). Empty for the simple lock, which has no queue.
   */
  readonly queueId: string;
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
  /**
   * Queue in this session only (a downgrade read must live in its write's session): when it ends,
   * the acquire fails with ZkSessionLostError instead of queueing again in the next session.
   */
  readonly session?: ZkSessionApi;
}

/**
 * The queue mechanics every lock type shares (Curator's LockInternals): enqueue one
 * EPHEMERAL_SEQUENTIAL node, list, ask the driver, watch whom it says, re-list when that changes,
 * and remove the node on every way out that is not a grant.
 */
export class LockQueue {
  private readonly rootAncestors: string[];
  constructor(
    private readonly sessions: SessionSource,
    rootPath: string,
    readonly remover: NodeRemover,
    /** The ACL given to the paths this queue creates (rootPath and the lock parents); open when absent. */
    private readonly acl?: readonly ZkAcl[],
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
      const session = request.session ?? (await this.sessions.session(stop));
      let grant: QueueGrant | null;
      try {
        grant = await this.acquireIn(session, request);
      } catch (error) {
        if (stop.aborted) throw stop.reason; // whatever else went wrong, the caller stopped first
        if (error instanceof ZkSessionLostError && !request.session) continue; // our node died with the session: queue again
        throw error;
      }
      if (grant?.session.lost.aborted) {
        if (request.session) throw request.session.lost.reason;
        continue; // granted, then the session ended: the node is gone
      }
      if (grant && stop.aborted) {
        // Granted in the same instant the caller gave up: hand the lock straight back.
        this.remover.removeSoon(session, grant.path);
        throw stop.reason;
      }
      return grant;
    }
  }

  private async acquireIn(session: ZkSessionApi, request: QueueRequest): Promise<QueueGrant | null> {
    const { parent, driver, stop } = request;
    const attempt: Attempt = { prefix: nodePrefix(driver.kind, session.id, driver.permits), mine: undefined, createSent: false };
    try {
      let list: ChildList | undefined = await this.enqueue(session, request, attempt);
      for (;;) {
        // Only this small step outlives the listing: a waiter keeps no arrays while it waits.
        const step = nextStep(list, attempt, driver, parent);
        list = undefined;
        for (const extra of step.extras) this.remover.removeSoon(session, extra);
        if (step.kind === 'vanished') {
          list = await this.enqueue(session, request, attempt);
          continue;
        }
        const path = `${parent}/${attempt.mine}`;
        if (step.kind === 'granted') {
          if (step.wakeNext) this.poke(session, path, request.data);
          return { session, path, fencingToken: step.fencingToken, queueId: step.queueId };
        }
        if (request.tryOnly) {
          attempt.mine = undefined;
          attempt.createSent = false;
          await this.remover.remove(session, path);
          return null;
        }
        await waitForChange(session, step.watch, stop, step.pokable);
        list = await readChildren(session, parent, stop);
      }
    } catch (error) {
      if (!session.lost.aborted) {
        if (attempt.mine !== undefined) await this.remover.removeBounded(session, `${parent}/${attempt.mine}`);
        else if (attempt.createSent) this.remover.removeByPrefixSoon(session, parent, attempt.prefix);
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
        if (error instanceof ZkNoChildrenForEphemeralsError) {
          attempt.createSent = false;
          throw new IncompatibleQueueError('it is held with the simple lock, which cannot share a resource with queue-based locks');
        }
        if (!(error instanceof ZkConnectionLossError)) throw error;
        const list = await readChildren(session, parent, stop);
        if (list.children.some((child) => child.startsWith(attempt.prefix))) return list;
        continue;
      }
      const result = await listed;
      return 'list' in result ? result.list : readChildren(session, parent, stop);
    }
  }

  /**
   * Tells the entry after ours that we stopped waiting, by writing our own node: the write fires
   * the watch a later waiter may have set on it. Background work: our grant does not wait for it.
   */
  private poke(session: ZkSessionApi, path: string, data: Buffer): void {
    untilAnswered(session, undefined, () => session.setData(path, data)).catch((error: unknown) => {
      if (!(error instanceof ZkNoNodeError || error instanceof ZkSessionLostError)) this.remover.report(error);
    });
  }

  /**
   * Creates the lock's parent (a container, reaped by ZooKeeper when empty), and rootPath (persistent)
   * only when that fails for want of it: a new name usually costs the one create.
   */
  private async ensureParent(session: ZkSessionApi, parent: string, stop: AbortSignal): Promise<void> {
    try {
      await createIfMissing(session, parent, 'CONTAINER', stop, this.acl);
      return;
    } catch (error) {
      if (!(error instanceof ZkNoNodeError)) throw error;
    }
    await this.ensureRoot(session, stop);
    await createIfMissing(session, parent, 'CONTAINER', stop, this.acl);
  }

  /** Creates rootPath and its ancestors where missing (persistent, with the configured ACL). */
  async ensureRoot(session: ZkSessionApi, stop: AbortSignal): Promise<void> {
    for (const path of this.rootAncestors) await createIfMissing(session, path, 'PERSISTENT', stop, this.acl);
  }
}

/**
 * Creates a node unless it exists, retrying through connection loss, and gives a node it created
 * `acl` (the binding can only create open nodes: the ACL follows in the next request).
 */
export async function createIfMissing(
  session: ZkSessionApi,
  path: string,
  mode: 'PERSISTENT' | 'CONTAINER',
  stop: AbortSignal,
  acl?: readonly ZkAcl[],
): Promise<void> {
  const created = await untilAnswered(session, stop, () =>
    session.create(path, '', mode).then(
      () => true,
      (error: unknown) => {
        if (!(error instanceof ZkNodeExistsError)) throw error;
        return false;
      },
    ),
  );
  if (created && acl) await untilAnswered(session, stop, () => session.setAcl(path, acl));
}

/** What one listing of the queue means for one attempt. */
type Step =
  | { kind: 'vanished'; extras: string[] }
  | { kind: 'granted'; extras: string[]; wakeNext: boolean; fencingToken: string; queueId: string }
  | { kind: 'wait'; extras: string[]; watch: string[]; pokable: boolean };

/**
 * Reads a listing for one attempt: our place (updating `attempt.mine`), duplicates of ours to delete,
 * and the driver's decision, as paths.
 */
function nextStep(list: ChildList, attempt: Attempt, driver: LockDriver, parent: string): Step {
  const queue = sortQueue(list.children);
  const ours = queue.filter((entry) => entry.name.startsWith(attempt.prefix));
  if (ours.length === 0) {
    // Our node vanished while the session lives: deleted by hand, or its parent re-created.
    attempt.mine = undefined;
    return { kind: 'vanished', extras: [] };
  }
  // A create retried after a lost reply can leave two nodes of ours (the first one applied late on
  // another server): the lowest is our place, the others must go, or we wait on ourselves.
  attempt.mine = ours[0]!.name;
  const extras = ours.slice(1).map((extra) => `${parent}/${extra.name}`);
  const effective = ours.length > 1 ? queue.filter((entry) => !ours.includes(entry) || entry === ours[0]) : queue;
  const decision = driver.decide(effective, effective.indexOf(ours[0]!));
  if (decision.granted) {
    return { kind: 'granted', extras, wakeNext: decision.wakeNext === true, fencingToken: formatToken(list.stat.pzxid), queueId: String(list.stat.czxid) };
  }
  return { kind: 'wait', extras, watch: decision.watch.map((entry) => `${parent}/${entry.name}`), pokable: decision.pokable === true };
}

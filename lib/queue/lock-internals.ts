import {
  IncompatibleQueueError,
  ZkConnectionLossError,
  ZkNoChildrenForEphemeralsError,
  ZkNoNodeError,
  ZkNodeExistsError,
  ZkRolledBackError,
  ZkSessionLostError,
} from '../zookeeper/zk-errors.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ParentModes } from './layouts.js';
import type { ChildList, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { NodeRemover } from './node-remover.js';
import { createIfMissing, readChildren, untilAnswered } from '../zookeeper/session-retry.js';
import { QueueWaiter } from './queue-waiter.js';
import type { WaiterView, QueueSink, SessionSource, WaiterHost, WaiterSpec } from './queue.types.js';

/**
 * The queue mechanics every lock type shares (Curator's LockInternals): enqueue one
 * EPHEMERAL_SEQUENTIAL node, list, ask the driver, watch whom it says, re-list when that changes,
 * and remove the node on every way out that is not a grant.
 */
export class LockInternals implements WaiterHost {
  private readonly rootAncestors: string[];
  /** The waiters of each session that are waiting for a watch, told when their session ends. */
  private readonly waiting = new Map<ZkSessionApi, Set<WaiterView>>();

  readonly remover: NodeRemover;
  /** The operator's epoch, the first part of every token (see fencing-token.ts). */
  readonly tokenEpoch: number;
  /** The ACL given to the paths this queue creates (rootPath and the lock parents); open when absent. */
  private readonly acl: readonly ZkAcl[] | undefined;

  constructor(
    readonly sessions: SessionSource,
    options: { rootPath: string; remover: NodeRemover; acl?: readonly ZkAcl[]; tokenEpoch: number },
  ) {
    this.rootAncestors = pathPrefixes(options.rootPath);
    this.remover = options.remover;
    this.acl = options.acl;
    this.tokenEpoch = options.tokenEpoch;
  }

  /**
   * Queues an entry in `parent` and waits for its turn, telling `sink` once how it ended. A session
   * lost while waiting only means the node died with it: the entry queues again in the next session
   * (a downgrade read, `spec.under` a write, fails instead). `stop` ends the wait, its node removed (or the
   * removal scheduled when disconnected); `tryOnly` gives up at once (null) when the lock is taken.
   * A sink, not a promise: a waiting acquire is one QueueWaiter and the caller's promise, not a chain
   * of suspended async calls.
   */
  start(spec: WaiterSpec, sink: QueueSink): void {
    new QueueWaiter(this, spec, sink).start();
  }

  /** Remembers a waiter until it stops waiting, to tell it when its session ends. */
  track(session: ZkSessionApi, waiter: WaiterView): void {
    let waiters = this.waiting.get(session);
    if (!waiters) {
      const created = new Set<WaiterView>();
      waiters = created;
      this.waiting.set(session, created);
      // One listener per session, for all its waiters.
      session.onLost(() => {
        if (this.waiting.get(session) === created) this.waiting.delete(session);
        for (const lost of [...created]) lost.interrupt(session.lost.reason);
        created.clear();
      });
    }
    waiters.add(waiter);
  }

  untrack(session: ZkSessionApi, waiter: WaiterView): void {
    this.waiting.get(session)?.delete(waiter);
  }

  /**
   * Creates our node and lists the queue, both sent at once: ZooKeeper answers one session's
   * requests in order, so the listing already contains our node and the uncontended path costs one
   * round trip. After a connection loss the create's outcome is unknown: the listing after
   * reconnecting tells (the waiter adopts any node carrying our prefix), so it is only created again
   * when none is there.
   */
  async enqueue(session: ZkSessionApi, waiter: WaiterView): Promise<ChildList> {
    const { parent, data, stop } = waiter;
    // Every node with our prefix is created after this, with a zxid above every zxid seen so far: a
    // listing that holds one shows a pzxid at least as high, unless the server's history went back.
    // Copied: the watermark updates its record of the queue in place as listings come.
    const seen = session.queueSeen(parent);
    const floor: Floor = { zxid: session.highestZxid, czxid: seen?.czxid ?? 0, cversion: seen?.cversion ?? 0 };
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      waiter.createSent = true;
      const created = session.create(`${parent}/${waiter.prefix}`, data, waiter.driver.createMode ?? 'EPHEMERAL_SEQUENTIAL', this.acl);
      const listed = session.getChildren(parent).then(
        (list) => ({ list }),
        (error: unknown) => ({ error }),
      );
      try {
        const path = await created;
        waiter.mine = path.slice(parent.length + 1);
      } catch (error) {
        await listed;
        if (error instanceof ZkNoNodeError) {
          waiter.createSent = false; // refused: nothing was created
          await this.ensureParent(session, parent, waiter.driver.parents, stop);
          continue;
        }
        if (error instanceof ZkNoChildrenForEphemeralsError) {
          waiter.createSent = false;
          throw new IncompatibleQueueError('it is held with the simple lock, which cannot share a resource with queue-based locks');
        }
        // A fixed name (Curator's downgrade read) created again after a lost reply exists already: ours.
        const retriedFixedName = error instanceof ZkNodeExistsError && waiter.driver.createMode === 'EPHEMERAL';
        if (!(error instanceof ZkConnectionLossError) && !retriedFixedName) throw error;
        const list = await readChildren(session, parent, stop);
        if (list.children.some((child) => child.startsWith(waiter.prefix))) return notRolledBack(list, floor, parent, waiter.prefix);
        continue;
      }
      const result = await listed;
      return notRolledBack('list' in result ? result.list : await readChildren(session, parent, stop), floor, parent, waiter.prefix);
    }
  }

  /**
   * Tells the entry after ours that we stopped waiting, by writing our own node: the write fires
   * the watch a later waiter may have set on it. Background work: our grant does not wait for it.
   */
  poke(session: ZkSessionApi, path: string, data: Buffer): void {
    untilAnswered(session, undefined, () => session.setData(path, data)).catch((error: unknown) => {
      if (!(error instanceof ZkNoNodeError || error instanceof ZkSessionLostError)) this.remover.report(error);
    });
  }

  /**
   * Creates the lock's parent (in our layout a container, reaped by ZooKeeper when empty), and its
   * ancestors (rootPath: persistent) only when that fails for want of them: a new name usually costs
   * the one create. Foreign layouts create them as their own clients do.
   */
  private async ensureParent(session: ZkSessionApi, parent: string, modes: ParentModes, stop: AbortSignal): Promise<void> {
    try {
      await createIfMissing(session, parent, modes.parent, stop, this.acl);
      return;
    } catch (error) {
      if (!(error instanceof ZkNoNodeError)) throw error;
    }
    for (const ancestor of pathPrefixes(parent).slice(0, -1)) {
      // rootPath and above stay persistent in every layout; a layout's own mode applies below it.
      const mode = this.rootAncestors.includes(ancestor) ? 'PERSISTENT' : modes.ancestors;
      await createIfMissing(session, ancestor, mode, stop, this.acl);
    }
    await createIfMissing(session, parent, modes.parent, stop, this.acl);
  }

  /** Creates rootPath and its ancestors where missing (persistent, with the configured ACL). */
  async ensureRoot(session: ZkSessionApi, stop: AbortSignal): Promise<void> {
    for (const path of this.rootAncestors) await createIfMissing(session, path, 'PERSISTENT', stop, this.acl);
  }
}

/** What was seen before our create: the highest zxid, and the queue's parent as last listed (czxid 0: never). */
interface Floor {
  readonly zxid: number;
  readonly czxid: number;
  readonly cversion: number;
}

/**
 * A listing that holds the node we just created, checked against what was seen before the create:
 * its pzxid is at least our node's zxid, and the parent's cversion went up, unless the servers'
 * history went back (see ZxidWatermark).
 */
function notRolledBack(list: ChildList, floor: Floor, parent: string, prefix: string): ChildList {
  const { stat } = list;
  if (!list.children.some((child) => child.startsWith(prefix))) return list;
  if (stat.pzxid < floor.zxid) throw new ZkRolledBackError(parent, floor.zxid, stat.pzxid);
  // A parent created again gets a higher zxid than the one it replaces: an older one (restored from a
  // backup taken before the re-creation) would hand out tokens below those of the newer one.
  if (stat.czxid < floor.czxid) throw new ZkRolledBackError(parent, floor.czxid, stat.czxid, 'queue');
  // Our create counted up the parent's children's version since that listing, unless restored.
  if (floor.czxid !== 0 && floor.czxid === stat.czxid && stat.cversion <= floor.cversion) {
    throw new ZkRolledBackError(parent, floor.cversion, stat.cversion, 'sequence');
  }
  return list;
}

/**
 * Whether a grant may be handed to the caller: the one check every recipe makes before it does (the
 * queue's waiters, the simple lock, the lease pools), and the check that the servers' history did
 * not go back under the node just created.
 *
 * A grant is handed over only while its session lives, the caller still wants it, and the session's
 * lease still runs: a grant read late (a granting write noticed after a long pause) cannot be
 * trusted once the lease has run out, as ZooKeeper may have expired the session meanwhile.
 */
import { HistoryWentBackError } from '../zookeeper/zk-errors.js';
import type { ChildList, NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';

/**
 * `'trusted'`: hand it over. `'session-ended'`: the node died with its session, or the lease ran out
 * (the session is ended now, its node with it): acquire again in the next session. `'stopped'`: the
 * caller gave up in the same instant: give the node back.
 */
export type GrantCheck = 'trusted' | 'session-ended' | 'stopped';

/** Checks a grant found in `session` for a caller whose wait ends with `stop`. */
export function checkGrant(session: ZkSessionApi, stop: AbortSignal): GrantCheck {
  if (session.lost.aborted) return 'session-ended';
  if (stop.aborted) return 'stopped';
  if (!session.lease.checkNow()) return 'session-ended'; // ends the session when the lease has run out
  return 'trusted';
}

/**
 * What was seen before a create: the highest zxid, and the queue's parent as last listed (czxid 0:
 * never). Every node the create makes gets a zxid above it, unless the servers' history went back.
 */
export interface HistoryFloor {
  readonly zxid: number;
  readonly czxid: number;
  readonly cversion: number;
}

/** The floor before a create under `parent`. Copied: the watermark updates its record of the queue in place. */
export function historyFloor(session: ZkSessionApi, parent: string): HistoryFloor {
  const { watermark } = session;
  const seen = watermark.queues.get(parent);
  return { zxid: watermark.highest, czxid: seen?.czxid ?? 0, cversion: seen?.cversion ?? 0 };
}

/**
 * A listing that holds the node we just created (a child starting with `prefix`), checked against
 * the floor: its pzxid is at least our node's zxid, the parent is not an older incarnation, and the
 * parent's cversion went up (see ZxidWatermark).
 * @throws HistoryWentBackError
 */
export function checkListing(list: ChildList, floor: HistoryFloor, parent: string, prefix: string): ChildList {
  const { stat } = list;
  if (!list.children.some((child) => child.startsWith(prefix))) return list;
  if (stat.pzxid < floor.zxid) throw new HistoryWentBackError(parent, floor.zxid, stat.pzxid);
  // A parent created again gets a higher zxid than the one it replaces: an older one (restored from a
  // backup taken before the re-creation) would hand out tokens below those of the newer one.
  if (stat.czxid < floor.czxid) throw new HistoryWentBackError(parent, floor.czxid, stat.czxid, 'queue');
  // Our create counted up the parent's children's version since that listing, unless restored.
  if (floor.czxid !== 0 && floor.czxid === stat.czxid && stat.cversion <= floor.cversion) {
    throw new HistoryWentBackError(parent, floor.cversion, stat.cversion, 'sequence');
  }
  return list;
}

/**
 * A node we just created, checked against the floor: its own zxid is above everything seen before.
 * @throws HistoryWentBackError
 */
export function checkNode(node: NodeData, floor: HistoryFloor, path: string): NodeData {
  if (node.stat.czxid < floor.zxid) throw new HistoryWentBackError(path, floor.zxid, node.stat.czxid);
  return node;
}

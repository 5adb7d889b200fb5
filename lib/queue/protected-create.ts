/**
 * The protected create (Curator's `withProtection()`): the one way every recipe creates the node
 * that holds its place (a queue entry, the simple lock's node, a lease), survives a lost reply, and
 * cleans up after itself. A fix to it lands once.
 *
 * - The node's name is unique to the acquire (a session id and a nonce, or a uuid), so a create
 *   whose reply was lost is found again by that name among its parent's children and adopted, never
 *   created twice, and never confused with a node of an older session. A name every contender
 *   creates (the simple lock) is recognised by a marker at the start of its data instead.
 * - A read is sent with the create, answered right after it in the same round trip (ZooKeeper
 *   answers a session's requests in order): the parent's listing for a queue, the node itself for
 *   the simple lock. The uncontended acquire stays one round trip.
 * - What it reads back is checked against what the session saw before the create: every node the
 *   create makes gets a higher zxid, unless the servers' history went back (a restore from an older
 *   backup), which would hand out fencing tokens that go backwards (HistoryWentBackError).
 * - A missing parent is created (LockParents: the rootPath rule), then the create is sent again.
 * - On an error or a stop during an attempt, `abandon` deletes what the create may have made (a busy
 *   try, and a grant that comes as its caller stops, delete theirs through the NodeRemover).
 */
import {
  HistoryWentBackError,
  QueueConflictError,
  ZkConnectionLossError,
  ZkNoChildrenForEphemeralsError,
  ZkNodeExistsError,
  ZkNoNodeError,
  ZkSessionLostError,
} from '../zookeeper/zk-errors.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ChildList, NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { ParentModes } from './layouts.js';
import type { LockParents } from './lock-parents.js';
import type { NodeRemover } from './node-remover.js';

/** One node to create, and how to know it again. */
export interface ProtectedNode {
  readonly parent: string;
  /**
   * Its name or, with `EPHEMERAL_SEQUENTIAL`, the start of it (ZooKeeper appends the sequence).
   * Unique to this acquire, so that any child starting with it is ours, unless `marker` is given.
   */
  readonly name: string;
  readonly data: Buffer;
  readonly mode: 'EPHEMERAL_SEQUENTIAL' | 'EPHEMERAL';
  /** How a missing parent and its ancestors are created (below rootPath). */
  readonly parents: ParentModes;
  /**
   * A name every contender creates (the simple lock): the node is ours only when its data starts
   * with this marker, and one held by someone else is `taken`.
   */
  readonly marker?: string;
  /** Created only while this node exists, in one transaction (kazoo's lease pool: our guard's node). */
  readonly whileExists?: string;
  /** What to read in the same round trip: the parent's children, or the node. */
  readonly readBack?: 'children' | 'node';
}

/**
 * How far a create got, kept by its caller across attempts (a queue waiter keeps it in its own
 * fields: one object per waiting acquire).
 */
export interface CreateProgress {
  /** A create was sent whose node may exist even though its name is unknown. */
  createSent: boolean;
  /** Our node's name, once a create's reply gave it. */
  mine: string | undefined;
}

/** Our node: created, or found after a lost reply. */
export interface Created {
  readonly outcome: 'created';
  /** Its full path. */
  readonly path: string;
  /** Found after a lost reply (the listing may hold more than one node of ours: the lowest is our place). */
  readonly adopted: boolean;
  /** The parent's children, read after the create (`readBack: 'children'`). */
  readonly children?: ChildList;
  /**
   * The node as read after the create (`readBack: 'node'`); null when it is gone already (or, for a
   * shared name, is not ours any more: only the session's end deletes our node).
   */
  readonly node?: NodeData | null;
}

/** A shared name (`marker`) held by someone else, as read (null: gone again meanwhile). */
export interface Taken {
  readonly outcome: 'taken';
  readonly holder: NodeData | null;
}

/** The node of `whileExists` is gone: nothing was created. */
export interface Refused {
  readonly outcome: 'refused';
}

/** One ProtectedCreate per client: the ACL, the parents' rules and the clean-up it shares. */
export class ProtectedCreate {
  constructor(
    readonly parents: LockParents,
    private readonly acl: readonly ZkAcl[] | undefined,
    private readonly remover: NodeRemover,
  ) {}

  /**
   * Creates `node` in `session`, waiting for the connection first; after a lost reply, adopts the
   * node the create made, or creates it again when there is none.
   * @throws QueueConflictError when the parent is a simple lock's node (it can have no children).
   */
  async create(session: ZkSessionApi, node: ProtectedNode, progress: CreateProgress, stop: AbortSignal): Promise<Created | Taken | Refused> {
    const { parent, name, mode, marker, readBack } = node;
    const path = `${parent}/${name}`;
    // What was seen before (copied: the watermark updates its record of the queue in place).
    const { watermark } = session;
    const seen = readBack === 'children' ? watermark.queues.get(parent) : undefined;
    const floor: HistoryFloor = { zxid: watermark.highest, czxid: seen?.czxid ?? 0, cversion: seen?.cversion ?? 0 };
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      progress.createSent = true;
      // Alone, or in one transaction with a check that `whileExists` is there.
      const created = node.whileExists === undefined ? session.create(path, node.data, mode, this.acl) : this.createWhileExists(session, node, path, node.whileExists);
      // Sent with the create, so answered right after it; undefined when it failed (the create's
      // own answer tells why).
      const read =
        readBack === 'children' ? session.getChildren(parent).catch(noAnswer) : readBack === 'node' ? session.getData(path).catch(noAnswer) : undefined;
      let createdPath: string;
      try {
        createdPath = await created;
      } catch (error) {
        const answer = await read;
        if (error instanceof ZkNoNodeError) {
          progress.createSent = false; // refused: nothing was created
          if (node.whileExists !== undefined && !(await readNode(session, node.whileExists, stop))) return { outcome: 'refused' };
          await this.parents.ensure(session, parent, node.parents, stop);
          continue;
        }
        if (error instanceof ZkNoChildrenForEphemeralsError) {
          progress.createSent = false;
          throw new QueueConflictError('it is held with the simple lock, which cannot share a resource with queue-based locks');
        }
        // A fixed name created again after a lost reply exists already; a shared name may be someone else's.
        const exists = error instanceof ZkNodeExistsError && mode === 'EPHEMERAL';
        if (!(error instanceof ZkConnectionLossError) && !exists) throw error;
        if (marker === undefined) {
          const list = await readChildren(session, parent, stop);
          const found = list.children.find((child) => child.startsWith(name));
          if (found !== undefined) return { outcome: 'created', path: `${parent}/${found}`, adopted: true, children: checkListing(list, floor, parent, found) };
          continue;
        }
        const holder = (exists ? (answer as NodeData | undefined) : undefined) ?? (await readNode(session, path, stop));
        if (holder && isMarked(holder, marker)) return { outcome: 'created', path, adopted: true, node: checkNode(holder, floor, path) }; // an earlier create of ours
        if (!exists) continue;
        progress.createSent = false;
        return { outcome: 'taken', holder };
      }
      const mine = createdPath.slice(parent.length + 1);
      progress.mine = mine;
      const answer = await read;
      // The read sent with the create failed (a dropped connection): read again.
      if (readBack === 'children') {
        const children = (answer as ChildList | undefined) ?? (await readChildren(session, parent, stop));
        return { outcome: 'created', path: createdPath, adopted: false, children: checkListing(children, floor, parent, mine) };
      }
      if (readBack === 'node') {
        const now = (answer as NodeData | undefined) ?? (await readNode(session, path, stop));
        // Gone between the create and the read, or (a shared name) someone else's by then.
        const ours = now && (marker === undefined || isMarked(now, marker)) ? checkNode(now, floor, path) : null;
        return { outcome: 'created', path: createdPath, adopted: false, node: ours };
      }
      return { outcome: 'created', path: createdPath, adopted: false };
    }
  }

  /** The create request in one transaction with a check that `whileExists` is there. */
  private createWhileExists(session: ZkSessionApi, node: ProtectedNode, path: string, whileExists: string): Promise<string> {
    return session
      .multi([
        { op: 'check', path: whileExists, version: -1 },
        { op: 'create', path, data: node.data, mode: 'EPHEMERAL', acl: this.acl },
      ])
      .then(() => path);
  }

  /**
   * Gives back what a create made, on a way out that is not a grant: our node once its name is known
   * (one delete attempt while connected, so that a timed-out acquire has cleaned up when it
   * rejects), else every node a create of unknown outcome may have made, in the background. A shared
   * name (`marker`) is deleted only when its data shows it is ours. Nothing when the session ended
   * (its nodes went with it). Failures go to the background-error report.
   */
  async abandon(session: ZkSessionApi, node: Pick<ProtectedNode, 'parent' | 'name' | 'marker'>, progress: CreateProgress): Promise<void> {
    if (session.lost.aborted) return;
    const { remover } = this;
    try {
      if (node.marker !== undefined) {
        if (progress.createSent) this.removeIfMarked(session, `${node.parent}/${node.name}`, node.marker);
      } else if (progress.mine !== undefined) {
        await remover.removeBounded(session, `${node.parent}/${progress.mine}`);
      } else if (progress.createSent) {
        remover.removeByPrefixSoon(session, node.parent, node.name);
      }
    } catch (error) {
      remover.report(error);
    }
  }

  /** Deletes, in the background, the node at `path` if its data starts with `marker`. */
  private removeIfMarked(session: ZkSessionApi, path: string, marker: string): void {
    const run = async (): Promise<void> => {
      const found = await readNode(session, path, undefined);
      if (found && isMarked(found, marker)) await this.remover.remove(session, path);
    };
    run().catch((error: unknown) => {
      if (!(error instanceof ZkSessionLostError)) this.remover.report(error);
    });
  }
}

/** A read sent with a create that failed: the create's own answer tells why. */
function noAnswer(): undefined {
  return undefined;
}

/**
 * What a create saw before it: the highest zxid (0: none), and the queue's parent as last listed
 * (czxid 0: never). Every zxid seen is of a committed transaction, so every node the create makes
 * gets a zxid strictly above it, unless the servers' history went back.
 */
interface HistoryFloor {
  readonly zxid: number;
  readonly czxid: number;
  readonly cversion: number;
}

/**
 * A listing that holds the node we just created (`ours`), checked against the floor: its pzxid (at
 * least our node's zxid) is above the floor, the parent is not an older incarnation, and the
 * parent's cversion went up (see ZxidWatermark). A listing without our node (deleted meanwhile)
 * proves nothing.
 * @throws HistoryWentBackError
 */
function checkListing(list: ChildList, floor: HistoryFloor, parent: string, ours: string): ChildList {
  const { stat } = list;
  if (!list.children.includes(ours)) return list;
  // Equal is gone back too: servers restored to one transaction before the floor give our create the floor's zxid.
  if (floor.zxid !== 0 && stat.pzxid <= floor.zxid) throw new HistoryWentBackError(parent, floor.zxid, stat.pzxid);
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
function checkNode(node: NodeData, floor: HistoryFloor, path: string): NodeData {
  if (floor.zxid !== 0 && node.stat.czxid <= floor.zxid) throw new HistoryWentBackError(path, floor.zxid, node.stat.czxid);
  return node;
}

/** Whether a node's data starts with `marker` (the acquire that created it). */
function isMarked(node: NodeData, marker: string): boolean {
  return node.data.subarray(0, Buffer.byteLength(marker)).toString() === marker;
}

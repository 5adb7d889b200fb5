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
 * - A missing parent is created (LockParents: the rootPath rule), then the create is sent again.
 * - On every way out that is not a grant, `abandon` deletes what the create may have made.
 */
import {
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
    const { parent, name, mode, marker } = node;
    const path = `${parent}/${name}`;
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      progress.createSent = true;
      const created = this.send(session, node, path);
      // Sent with the create, so answered right after it; undefined when it failed (the create's
      // own answer tells why).
      const read =
        node.readBack === 'children' ? settled(session.getChildren(parent)) : node.readBack === 'node' ? settled(session.getData(path)) : undefined;
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
          if (found !== undefined) return { outcome: 'created', path: `${parent}/${found}`, adopted: true, children: list };
          continue;
        }
        const holder = (exists ? (answer as NodeData | undefined) : undefined) ?? (await readNode(session, path, stop));
        if (holder && isMarked(holder, marker)) return { outcome: 'created', path, adopted: true, node: holder }; // an earlier create of ours
        if (!exists) continue;
        progress.createSent = false;
        return { outcome: 'taken', holder };
      }
      progress.mine = createdPath.slice(parent.length + 1);
      const answer = await read;
      // The read sent with the create failed (a dropped connection): read again.
      if (node.readBack === 'children') {
        const children = (answer as ChildList | undefined) ?? (await readChildren(session, parent, stop));
        return { outcome: 'created', path: createdPath, adopted: false, children };
      }
      if (node.readBack === 'node') {
        const now = (answer as NodeData | undefined) ?? (await readNode(session, path, stop));
        // Gone between the create and the read, or (a shared name) someone else's by then.
        const ours = now && (marker === undefined || isMarked(now, marker)) ? now : null;
        return { outcome: 'created', path: createdPath, adopted: false, node: ours };
      }
      return { outcome: 'created', path: createdPath, adopted: false };
    }
  }

  /** The create request: alone, or in one transaction with a check that `whileExists` is there. */
  private send(session: ZkSessionApi, node: ProtectedNode, path: string): Promise<string> {
    if (node.whileExists === undefined) return session.create(path, node.data, node.mode, this.acl);
    return session
      .multi([
        { op: 'check', path: node.whileExists, version: -1 },
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

/** A read sent with a create: undefined when it failed. */
function settled<T>(read: Promise<T>): Promise<T | undefined> {
  return read.then(
    (value) => value,
    () => undefined,
  );
}

/** Whether a node's data starts with `marker` (the acquire that created it). */
function isMarked(node: NodeData, marker: string): boolean {
  return node.data.subarray(0, Buffer.byteLength(marker)).toString() === marker;
}

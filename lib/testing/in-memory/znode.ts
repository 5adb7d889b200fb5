import type { ZkStat } from '../../zookeeper/native-handle.js';
import { ZK_PERMS, type ZkAcl } from '../../zookeeper/zk-acl.js';

/** One node of the in-memory tree, as a server keeps it. */
export interface ZNode {
  data: Buffer;
  acl: readonly ZkAcl[];
  readonly czxid: number;
  mzxid: number;
  pzxid: number;
  readonly ctime: Date;
  mtime: Date;
  version: number;
  /** Children ever created (what sequence numbers count); a Stat reports creates plus deletes. */
  cversion: number;
  aversion: number;
  /** Owning session's id for an ephemeral node, '0' otherwise. */
  readonly ephemeralOwner: string;
  readonly container: boolean;
  readonly children: Set<string>;
}

/** What the binding creates every node with: open to everyone. */
export const OPEN_ACL: readonly ZkAcl[] = [{ scheme: 'world', id: 'anyone', perms: ZK_PERMS.ALL }];

/** A node created at `zxid`, owned by session `owner` ('0': not ephemeral). */
export function newZNode(zxid: number, owner: string, container: boolean, data = Buffer.alloc(0), acl = OPEN_ACL): ZNode {
  const now = new Date();
  return {
    data,
    acl,
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctime: now,
    mtime: now,
    version: 0,
    cversion: 0,
    aversion: 0,
    ephemeralOwner: owner,
    container,
    children: new Set(),
  };
}

/** The node's Stat, as a server answers it. */
export function statOf(node: ZNode): ZkStat {
  return {
    czxid: node.czxid,
    mzxid: node.mzxid,
    pzxid: node.pzxid,
    version: node.version,
    // As ZooKeeper's DataNode.copyStat: every child created and not still there was deleted.
    cversion: node.cversion * 2 - node.children.size,
    numChildren: node.children.size,
    dataLength: node.data.length,
    ephemeralOwner: node.ephemeralOwner,
    ctime: node.ctime,
    mtime: node.mtime,
  };
}

/** The parent's path ('/' for a node at the top). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === 0 ? '/' : path.slice(0, slash);
}

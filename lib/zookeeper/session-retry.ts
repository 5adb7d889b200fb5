import type { ZkStat } from './native-client.js';
import { untilAnswered } from './session-lifecycle.js';
import { ZkNodeExistsError, ZkNoNodeError } from './zk-errors.js';
import type { ZkAcl } from './zk-acl.js';
import type { ChildList, NodeData, ZkSessionApi } from './zk-session-api.js';

// The reads and creates the recipes repeat through connection loss, each with its answer for a
// missing node (untilAnswered, the loop itself, is in session-lifecycle.ts, beside whenConnected).

export const EMPTY_STAT: ZkStat = {
  czxid: 0,
  mzxid: 0,
  pzxid: 0,
  version: 0,
  cversion: 0,
  numChildren: 0,
  dataLength: 0,
  ephemeralOwner: '0',
};

/** Lists a queue, retrying through connection loss. A missing parent is an empty queue. */
export function readChildren(session: ZkSessionApi, parent: string, stop: AbortSignal | undefined): Promise<ChildList> {
  return untilAnswered(session, stop, () =>
    session.getChildren(parent).catch((error: unknown) => {
      if (error instanceof ZkNoNodeError) return { children: [], stat: EMPTY_STAT };
      throw error;
    }),
  );
}

/** Reads a node, retrying through connection loss; null when it does not exist. */
export function readNode(session: ZkSessionApi, path: string, stop: AbortSignal | undefined): Promise<NodeData | null> {
  return untilAnswered(session, stop, () =>
    session.getData(path).catch((error: unknown) => {
      if (error instanceof ZkNoNodeError) return null;
      throw error;
    }),
  );
}

/**
 * Creates a node unless it exists, retrying through connection loss, with `acl` in the create
 * request (so it is never open, not even for an instant). Resolves true when this call created it
 * (a create retried after a lost reply that had gone through counts as existing).
 */
export function createIfMissing(
  session: ZkSessionApi,
  path: string,
  mode: 'PERSISTENT' | 'CONTAINER',
  stop: AbortSignal,
  acl?: readonly ZkAcl[],
  data = '',
): Promise<boolean> {
  return untilAnswered(session, stop, () =>
    session.create(path, data, mode, acl).then(
      () => true,
      (error: unknown) => {
        if (error instanceof ZkNodeExistsError) return false;
        throw error;
      },
    ),
  );
}

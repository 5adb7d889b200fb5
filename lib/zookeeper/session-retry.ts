import type { ZkStat } from './native-client.js';
import { ZkConnectionLossError, ZkNodeExistsError, ZkNoNodeError } from './zk-errors.js';
import type { ZkAcl } from './zk-acl.js';
import type { ChildList, NodeData, ZkSessionApi } from './zk-session-api.js';

/**
 * Runs a request until it gets an answer: after each connection loss, waits for the connection to
 * come back (or `stop`, or the session's end) and sends it again. Only for requests that are safe
 * to repeat.
 */
export async function untilAnswered<T>(session: ZkSessionApi, stop: AbortSignal | undefined, send: () => Promise<T>): Promise<T> {
  for (;;) {
    if (!session.connected) await session.whenConnected(stop);
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof ZkConnectionLossError)) throw error;
    }
  }
}

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

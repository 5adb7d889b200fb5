import type { ZkStat } from '../zookeeper/native-client.js';
import { ZkConnectionLossError, ZkNoNodeError } from '../zookeeper/zk-errors.js';
import type { ChildList, NodeData, ZkSessionApi } from '../zookeeper/zk-session.js';

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

/** Most holders one ZooKeeper grant can serve within a process (a cohort's local handoffs). */
export const MAX_HANDOFFS_PER_GRANT = 999_999;

/**
 * A fencing token, fixed width so that tokens compare correctly as strings and as BigInts: the zxid
 * that created the queue's parent (20 zero-padded digits, which any 64-bit zxid fits), the node's
 * sequence number in that queue (10 digits), then which holder of that grant it is (6 digits; 0 for
 * the grant itself: a cohort hands one grant to several callers of its process in turn).
 *
 * Why it grows with every grant of a resource: within one queue, a holder is granted only once every
 * entry below it that it conflicts with is gone, so later holders have higher sequence numbers; a reaped or deleted parent
 * that is created again gets a higher zxid than anything before it, while its sequence numbers start
 * over. The simple lock, which has no queue, passes its node's own zxid and sequence 0.
 */
export function formatToken(queueZxid: number, sequence = 0, handoff = 0): string {
  return queueZxid.toString().padStart(20, '0') + sequence.toString().padStart(10, '0') + handoff.toString().padStart(6, '0');
}

/** The token of the `handoff`-th holder of the grant whose own token is `grantToken`. */
export function handoffToken(grantToken: string, handoff: number): string {
  return grantToken.slice(0, 30) + handoff.toString().padStart(6, '0');
}

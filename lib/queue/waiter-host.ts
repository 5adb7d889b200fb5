import { ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { untilAnswered } from '../zookeeper/session-lifecycle.js';
import type { NodeRemover } from './node-remover.js';
import type { ProtectedCreate } from './protected-create.js';
import type { SessionSource } from './queue.types.js';

/** A waiter watching for its turn, as its host sees it: woken when its session ends. */
export interface WatchingWaiter {
  interrupt(reason: unknown): void;
}

/**
 * What the queue waiters of one client share (one per RecipeRuntime): where sessions come from,
 * the protected create and the remover, the token epoch, and the waiters of each session that are
 * watching, to wake them when that session ends. The course of one acquire is its QueueWaiter's
 * (queue-waiter.ts).
 */
export class WaiterHost {
  /** The waiters of each session that are waiting for a watch, told when their session ends. */
  private readonly watching = new Map<ZkSessionApi, Set<WatchingWaiter>>();

  readonly creator: ProtectedCreate;
  readonly remover: NodeRemover;
  /** The operator's epoch, the first part of every token (see fencing-token.ts). */
  readonly tokenEpoch: number;

  constructor(
    readonly sessions: SessionSource,
    options: { creator: ProtectedCreate; remover: NodeRemover; tokenEpoch: number },
  ) {
    this.creator = options.creator;
    this.remover = options.remover;
    this.tokenEpoch = options.tokenEpoch;
  }

  /** Remembers a waiter until it stops waiting, to wake it when its session ends. */
  track(session: ZkSessionApi, waiter: WatchingWaiter): void {
    let waiters = this.watching.get(session);
    if (!waiters) {
      const created = new Set<WatchingWaiter>();
      waiters = created;
      this.watching.set(session, created);
      // One listener per session, for all its waiters.
      session.onLost(() => {
        if (this.watching.get(session) === created) this.watching.delete(session);
        for (const lost of [...created]) lost.interrupt(session.lost.reason);
        created.clear();
      });
    }
    waiters.add(waiter);
  }

  untrack(session: ZkSessionApi, waiter: WatchingWaiter): void {
    this.watching.get(session)?.delete(waiter);
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
}

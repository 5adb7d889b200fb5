import { ZkConnectionLossError, ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { untilAnswered } from '../zookeeper/session-lifecycle.js';
import { readChildren } from '../zookeeper/session-retry.js';

/** Deletes the lock nodes of acquires that end without a lock: timeout, abort, a grant nobody wants any more (a held lock's release: removeHeldNode). */
export class NodeRemover {
  constructor(
    /** Failures of clean-up that runs after the caller was already answered. */
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
  ) {}

  /**
   * Deletes a node, retrying through connection loss. Resolves once the delete is confirmed, the
   * node is found already gone, or the session (and so the node) is gone. (A held lock's node is
   * deleted by its GrantedLock: removeHeldNode.)
   */
  async remove(session: ZkSessionApi, path: string): Promise<void> {
    try {
      await untilAnswered(session, undefined, session.delete.bind(session, path));
    } catch (error) {
      if (!(error instanceof ZkNoNodeError || error instanceof ZkSessionLostError)) throw error;
    }
  }

  /**
   * Deletes a node the caller is giving up. The caller waits for one attempt while connected (so a
   * timed-out acquire has cleaned up when it rejects); anything longer goes on in the background.
   */
  async removeBounded(session: ZkSessionApi, path: string): Promise<void> {
    if (session.connected) {
      try {
        await session.delete(path);
        return;
      } catch (error) {
        if (error instanceof ZkNoNodeError || error instanceof ZkSessionLostError) return;
        if (!(error instanceof ZkConnectionLossError)) {
          this.onBackgroundError(error);
          return;
        }
      }
    }
    this.removeSoon(session, path);
  }

  /** Deletes a node in the background. */
  removeSoon(session: ZkSessionApi, path: string): void {
    this.remove(session, path).catch(this.onBackgroundError);
  }

  /** Deletes, in the background, every child of `parent` whose name starts with `prefix` (a create of unknown outcome). */
  removeByPrefixSoon(session: ZkSessionApi, parent: string, prefix: string): void {
    const run = async (): Promise<void> => {
      try {
        const { children } = await readChildren(session, parent, undefined);
        await Promise.all(children.filter((c) => c.startsWith(prefix)).map((c) => this.remove(session, `${parent}/${c}`)));
      } catch (error) {
        if (!(error instanceof ZkSessionLostError)) throw error;
      }
    };
    run().catch(this.onBackgroundError);
  }

  /** Reports a failure of background work. */
  report(error: unknown): void {
    this.onBackgroundError(error);
  }
}

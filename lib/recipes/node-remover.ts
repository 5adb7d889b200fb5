import { ZkConnectionLossError, ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../zookeeper/zk-session.js';
import { readChildren, untilAnswered } from './session-retry.js';

/** What a holder handing its lock on writes into its node just before deleting it. */
const RELEASED = Buffer.alloc(0);

/** Deletes lock nodes on every way out: release, timeout, abort, a grant nobody wants any more. */
export class NodeRemover {
  constructor(
    /** Failures of clean-up that runs after the caller was already answered. */
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
  ) {}

  /**
   * Deletes a node, retrying through connection loss. Resolves once the delete is confirmed, the
   * node is found already gone, or the session (and so the node) is gone.
   */
  async remove(session: ZkSessionApi, path: string): Promise<void> {
    await this.removeHeld(session, path);
  }

  /**
   * Deletes a held lock's node: 'deleted' once confirmed (or found gone: a retried delete whose first
   * attempt was applied), 'session-lost' when the session ended first: then ZooKeeper deleted the
   * node, possibly long ago, and the holder was no longer the holder.
   *
   * With `handOn`, the node is written first, in the same breath (QueueGrant.handOn): that write
   * alone may grant the lock to the entry watching the node, so once it was applied the release
   * cannot be taken back. Applied in a live session, it also proves the lock was held to the end:
   * the session ending before the delete got through is then no loss. A delete failing for another
   * reason is reported, and the node stays until the session ends.
   */
  async removeHeld(session: ZkSessionApi, path: string, handOn = false): Promise<'deleted' | 'session-lost'> {
    // true: applied; false: surely not; undefined: a connection loss left it unknown.
    const written = handOn
      ? session.setData(path, RELEASED).then(
          () => true,
          (error: unknown) => (error instanceof ZkConnectionLossError ? undefined : false),
        )
      : undefined;
    try {
      await untilAnswered(session, undefined, () => session.delete(path));
      return 'deleted';
    } catch (error) {
      if (error instanceof ZkNoNodeError) return 'deleted';
      const applied = written ? await written : false;
      if (error instanceof ZkSessionLostError) return applied === true ? 'deleted' : 'session-lost';
      if (applied === true || (applied === undefined && (await this.wasWritten(session, path)))) {
        this.onBackgroundError(error);
        return 'deleted';
      }
      throw error;
    }
  }

  /** Whether a hand-on write of unknown outcome reached the node (when unsure: yes, it cannot be taken back). */
  private async wasWritten(session: ZkSessionApi, path: string): Promise<boolean> {
    try {
      return (await untilAnswered(session, undefined, () => session.getData(path))).stat.version > 0;
    } catch (error) {
      return !(error instanceof ZkSessionLostError);
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

/**
 * A revocable holder's ear on its own lock node: Curator's revocation protocol, which this library
 * uses in every layout. A release request is the node's data set to `__REVOKE__` (what Curator's
 * `Revoker.attemptRevoke` writes, and LockService.requestRelease); a forced release is the node
 * deleted by someone else. The watch goes through the session's shared node watches, so a waiter's
 * removal of its watches on the same node never drops it.
 */
import { ZkConnectionLossError, ZkNoNodeError } from '../zookeeper/zk-errors.js';
import type { NodeChange, NodeWatch, WatchedStat, ZkSessionApi } from '../zookeeper/zk-session-api.js';

/** The data of a release request: Curator's `LockInternals.REVOKE_MESSAGE`. */
export const RELEASE_REQUEST = Buffer.from('__REVOKE__');

export interface ReleaseListener {
  /** The node was written with a release request (told once). */
  requested(): void;
  /** The node was deleted by someone else. */
  deleted(): void;
}

export class ReleaseWatch {
  private watch: NodeWatch | undefined;
  private stopped = false;
  private told = false;
  /** The data version last read: a watch armed on this version has nothing new to read. */
  private seenVersion = 0;

  constructor(
    private readonly session: ZkSessionApi,
    private readonly path: string,
    private readonly listener: ReleaseListener,
  ) {
    this.arm();
  }

  /** Stops listening (before the holder deletes its own node, or once the lock is gone). */
  stop(): void {
    this.stopped = true;
    this.watch?.cancel();
    this.watch = undefined;
  }

  private arm(): void {
    if (this.stopped) return;
    this.watch?.cancel();
    const watch = this.session.watchNode(this.path, (change) => this.changed(change));
    this.watch = watch;
    watch.armed.then(
      (stat) => this.armed(watch, stat),
      (error: unknown) => {
        // A dropped connection: watch again once connected (a session loss ends the lock, and this).
        if (error instanceof ZkConnectionLossError && this.watch === watch) {
          this.session.whenConnected().then(
            () => this.arm(),
            () => undefined,
          );
        }
      },
    );
  }

  private armed(watch: NodeWatch, stat: WatchedStat | null): void {
    if (this.stopped || this.watch !== watch) return;
    if (!stat) this.gone();
    else if (stat.version > this.seenVersion) this.read(); // written before the watch was set
  }

  private changed(change: NodeChange): void {
    if (this.stopped) return;
    if (change === 'deleted') this.gone();
    else this.read();
  }

  /** Reads the node, then watches it again (one request after the other: the read's version is seen first). */
  private read(): void {
    this.session.getData(this.path).then(
      ({ data, stat }) => {
        this.seenVersion = Math.max(this.seenVersion, stat.version);
        if (!this.stopped && !this.told && data.equals(RELEASE_REQUEST)) {
          this.told = true;
          this.listener.requested();
        }
      },
      (error: unknown) => {
        if (error instanceof ZkNoNodeError) this.gone();
      },
    );
    this.arm();
  }

  private gone(): void {
    if (this.stopped) return;
    this.stop();
    this.listener.deleted();
  }
}

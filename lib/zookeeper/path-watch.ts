import type { NodeChange, NodeWatch, WatchedStat } from './zk-session-api.js';

/** What a waiter on a node watch is told. */
type ChangeCallback = (change: NodeChange) => void;

/** Counts the waiters still waiting on a session's watches (cancelled ones do not count). */
export interface WatcherCount {
  watchers(delta: number): void;
  /** Every waiter of `watch` was cancelled: nobody needs it set any more. */
  unwatched(watch: PathWatch): void;
}

/**
 * One ZooKeeper watch on a path, shared by every waiter of this session on that path. Most paths
 * have one waiter: it is kept in `first`, and a Set is only made for the others. Once the watch is
 * set, only the node's version is kept (-1: no node), not the answer's promise.
 */
export class PathWatch implements NodeWatch {
  first: ChangeCallback | undefined = undefined;
  /** `first` was given out: a cancelled first waiter's slot is never reused (its handle is this object). */
  private firstTaken = false;
  others: Set<ChangeCallback> | undefined = undefined;
  private pending: Promise<WatchedStat | null> | undefined = undefined;
  private version = -1;

  constructor(
    readonly count: WatcherCount,
    readonly path: string,
  ) {}

  /** Set on the server: its answer came, and the node existed. */
  get isSet(): boolean {
    return this.pending === undefined && this.version >= 0;
  }

  /** Waiters not cancelled. */
  get waiting(): number {
    return (this.first ? 1 : 0) + (this.others?.size ?? 0);
  }

  get armed(): Promise<WatchedStat | null> {
    return this.pending ?? Promise.resolve(this.version < 0 ? null : { version: this.version });
  }

  /** The watch is being set: `answer` tells how. */
  arming(answer: Promise<WatchedStat | null>, failed: () => void): void {
    this.pending = answer;
    answer.then(
      (stat) => {
        this.pending = undefined;
        this.version = stat ? stat.version : -1;
        // Everyone gave up while it was being set: it is set for nobody.
        if (this.isSet && this.waiting === 0 && this.firstTaken) this.count.unwatched(this);
      },
      failed,
    );
  }

  /** Takes every callback out, in the order they were added. */
  drain(): ChangeCallback[] {
    const callbacks = this.first ? [this.first] : [];
    if (this.others) callbacks.push(...this.others);
    this.first = undefined;
    this.others = undefined;
    if (callbacks.length > 0) this.count.watchers(-callbacks.length);
    return callbacks;
  }

  add(callback: ChangeCallback): NodeWatch {
    this.count.watchers(1);
    if (!this.firstTaken) {
      this.firstTaken = true;
      this.first = callback;
      return this; // the only waiter: cancelling it is cancelling the first
    }
    (this.others ??= new Set()).add(callback);
    return new ExtraWatch(this, callback);
  }

  /** Cancels the first waiter. */
  cancel(): void {
    if (!this.first) return;
    this.first = undefined;
    this.count.watchers(-1);
    if (this.waiting === 0) this.count.unwatched(this);
  }
}

/** The handle of a second or later waiter on one path. */
class ExtraWatch implements NodeWatch {
  constructor(
    private readonly watch: PathWatch,
    private readonly callback: ChangeCallback,
  ) {}

  get armed(): Promise<WatchedStat | null> {
    return this.watch.armed;
  }

  cancel(): void {
    if (!this.watch.others?.delete(this.callback)) return;
    this.watch.count.watchers(-1);
    if (this.watch.waiting === 0) this.watch.count.unwatched(this.watch);
  }
}

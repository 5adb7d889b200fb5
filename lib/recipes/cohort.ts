import { LockLostError, LockTimeoutError } from '../errors.js';
import { GrantedLock, type NodeReleaser } from './granted-lock.js';
import type { LockTaker, RecipeAcquireOptions } from './recipe-runtime.js';
import { handoffToken, MAX_HANDOFFS_PER_GRANT } from '../queue/fencing-token.js';
import { readChildren } from '../zookeeper/session-retry.js';
import { type Stopper, stopperFor } from '../queue/stopper.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { type LineWaiter, WaitingLine } from './waiting-line.js';

/** The ZooKeeper acquire in flight for the local queue, and how to stop it. */
interface AcquireControl {
  readonly signal: AbortSignal | undefined;
  abort(): void;
}

/** What a cohort needs of the CohortLock it belongs to. */
export interface CohortSettings {
  /** The exclusive queue recipe the process's node is taken from. */
  readonly inner: LockTaker;
  readonly maxHandoffs: number;
  readonly maxHoldMs: number;
  /** Failures of clean-up nobody waits for (RecipeOptions.onBackgroundError). */
  report(error: unknown): void;
}

/** One caller waiting in the process for its turn. */
interface LocalWaiter extends LineWaiter {
  readonly options: RecipeAcquireOptions;
  /** tryAcquire or `waitTimeoutMs: 0`: only ever first, when the cohort was idle. */
  readonly noWait: boolean;
  readonly tryOnly: boolean;
  readonly resolve: (lock: GrantedLock | null) => void;
  readonly reject: (error: unknown) => void;
  stopper: Stopper | undefined;
  onStop: (() => void) | undefined;
}

/** The answer to tryAcquire (null) or `waitTimeoutMs: 0` (LockTimeoutError) when the lock is taken. */
export function busy(resource: string, tryOnly: boolean): Promise<GrantedLock | null> {
  return tryOnly ? Promise.resolve(null) : Promise.reject(new LockTimeoutError(resource, 0));
}

/** The local queue of one resource, and the ZooKeeper node that holds the process's place. */
export class Cohort implements NodeReleaser {
  /** The process's granted ZooKeeper node, while it has one. */
  private node: GrantedLock | undefined;
  private forgetNodeSession: (() => void) | undefined;
  /** A local caller holds the lock, or its release is deciding where the lock goes next. */
  private holding = false;
  /** The ZooKeeper acquire in flight on behalf of the local queue. */
  private acquiring: AcquireControl | undefined;
  private readonly line = new WaitingLine<LocalWaiter>();
  /** Holders the current grant has served: the next one's token suffix. */
  private served = 0;
  /** Handoffs, and their start, since the grant or since the last look found nobody else waiting. */
  private handoffs = 0;
  private windowStart = 0;
  /** The node is pinned (GrantedLock.pinNode): a read was taken under the current holder; its release must delete the node. */
  private pinned = false;
  /** Answers the caller whose giving up stopped the ZooKeeper acquire, once that acquire has ended. */
  private leaving: (() => void) | undefined;

  constructor(
    private readonly resource: string,
    /** The lock's exact path, when the callers gave one. */
    private readonly zkPath: string | undefined,
    private readonly settings: CohortSettings,
    private readonly forget: () => void,
  ) {}

  get waiting(): number {
    return this.line.live;
  }

  acquire(options: RecipeAcquireOptions, tryOnly: boolean): Promise<GrantedLock | null> {
    const noWait = tryOnly || options.waitTimeoutMs === 0;
    if (noWait && (this.node || this.acquiring || this.line.live > 0)) {
      // Taken or wanted by another caller of this process: not free right now.
      return busy(this.resource, tryOnly);
    }
    return new Promise<GrantedLock | null>((resolve, reject) => {
      const waiter: LocalWaiter = { options, noWait, tryOnly, resolve, reject, stopper: undefined, onStop: undefined, done: false };
      const stopper = noWait ? undefined : stopperFor(options.waitTimeoutMs, options.signal);
      if (stopper) {
        if (stopper.signal.aborted) {
          stopper.dispose();
          reject(stopper.explain(stopper.signal.reason, this.resource));
          return;
        }
        waiter.stopper = stopper;
        waiter.onStop = () => this.giveUp(waiter);
        stopper.signal.addEventListener('abort', waiter.onStop, { once: true });
      }
      this.line.push(waiter);
      this.pump();
    });
  }

  /** Starts what the queue needs next: nothing while someone holds or a ZooKeeper acquire runs. */
  private pump(): void {
    if (this.holding || this.node || this.acquiring) return;
    const first = this.line.peek();
    if (!first) {
      this.forgetIfIdle();
      return;
    }
    // Only a caller that can give up (a timeout or a signal) can leave the queue empty while the
    // acquire runs; for one that cannot, nothing will ever stop it, and it costs no AbortController.
    const acquiring: AcquireControl = first.stopper ? new AbortController() : { signal: undefined, abort: () => undefined };
    this.acquiring = acquiring;
    const options = { data: first.options.data, signal: acquiring.signal, zkPath: this.zkPath };
    const { inner } = this.settings;
    const inZooKeeper = inner.take(this.resource, first.noWait && !first.tryOnly ? { ...options, waitTimeoutMs: 0 } : options, first.tryOnly);
    inZooKeeper.then(
      (node) => this.granted(acquiring, first, node),
      (error: unknown) => this.failed(acquiring, first, error),
    );
  }

  private granted(acquiring: AcquireControl, first: LocalWaiter, node: GrantedLock | null): void {
    if (this.acquiring === acquiring) this.acquiring = undefined;
    if (!node) {
      this.finish(first, null); // tryAcquire: busy in ZooKeeper
      this.pump();
      return;
    }
    const next = this.line.next();
    if (!next || !node.isHeld()) {
      // Everyone left while it was granted (or its session ended at once): hand it back.
      const released = node.release().catch((error: unknown) => {
        if (!(error instanceof LockLostError)) this.settings.report(error); // lost: nothing left to release
      });
      if (this.leaving) void released.then(() => this.answerLeaving());
      this.pump();
      return;
    }
    this.node = node;
    this.forgetNodeSession = node.session.onLost(() => this.nodeLost(node));
    this.served = 0;
    this.handoffs = 0;
    this.windowStart = performance.now();
    this.pinned = false;
    this.grantTo(next, node);
    this.answerLeaving(); // a caller who came after the one that gave up took its place
  }

  private failed(acquiring: AcquireControl, first: LocalWaiter, error: unknown): void {
    if (this.acquiring === acquiring) this.acquiring = undefined;
    if (acquiring.signal?.aborted) {
      this.answerLeaving(); // the acquire removed its node before it rejected
      this.pump(); // stopped because every caller had left; new ones may have come since
      return;
    }
    if (first.noWait) {
      this.finish(first, undefined, error);
    } else {
      // A waiting acquire fails for reasons every caller shares (another kind of lock holds the
      // name, no permission, the service closing): each would have met it in its own acquire.
      for (let waiter = this.line.next(); waiter; waiter = this.line.next()) this.finish(waiter, undefined, error);
    }
    this.answerLeaving();
    this.pump();
  }

  private grantTo(waiter: LocalWaiter, node: GrantedLock): void {
    const served = this.served++;
    this.holding = true;
    const grant = {
      session: node.session,
      path: node.path,
      token: served === 0 ? node.fencingToken : handoffToken(node.fencingToken, served),
      queueId: node.queueId,
    };
    // The cohort itself is the handle's NodeReleaser: one object per resource, not one per hold.
    this.finish(waiter, new GrantedLock(this.resource, grant, this, waiter.options.onEnd));
  }

  /**
   * NodeReleaser, for the local holder's handle: its node is the cohort's current one, or was lost.
   * Whether a release to ZooKeeper hands the lock on is the node's own grant's to say.
   */
  removeHeld(session: ZkSessionApi, path: string): Promise<'released' | 'session-lost'> {
    const node = this.node;
    if (!node || node.path !== path || node.session !== session) return Promise.resolve('session-lost');
    return this.passOn(node);
  }

  /** NodeReleaser: only the current holder can take a read under its lock. */
  pinNode(): void {
    if (!this.node) return;
    this.pinned = true;
    this.node.pinNode(); // and the node's own release must not grant it by write in ZooKeeper either
  }

  /**
   * The local holder's release: the next local caller gets the lock at once, unless the handoff
   * bounds are reached and someone else waits in ZooKeeper, a read was taken under the lock, the
   * grant has served as many holders as its tokens can count, or the connection is down. Then the
   * node is deleted.
   */
  private async passOn(node: GrantedLock): Promise<'released' | 'session-lost'> {
    if (node !== this.node || !node.isHeld()) return 'session-lost';
    // While the connection is down, the session may already have ended on the server (a process
    // resumed from a pause learns it only when it reads its socket): a local handoff would then grant
    // a lock ZooKeeper has given to someone else. So no handoff while disconnected: the node goes
    // back, and the local waiters queue again, to be granted by ZooKeeper.
    if (!this.pinned && this.served < MAX_HANDOFFS_PER_GRANT && this.line.live > 0 && node.session.connected) {
      if (this.handoffs < this.settings.maxHandoffs && performance.now() - this.windowStart < this.settings.maxHoldMs) {
        this.handoffs++;
        this.grantTo(this.line.next()!, node);
        return 'released';
      }
      const othersWait = await this.othersWaiting(node);
      if (node !== this.node || !node.isHeld()) return 'session-lost';
      const next = othersWait ? undefined : this.line.next();
      if (next) {
        this.handoffs = 1;
        this.windowStart = performance.now();
        this.grantTo(next, node);
        return 'released';
      }
    }
    this.node = undefined;
    this.forgetNodeSession?.();
    this.holding = false;
    this.pump(); // whoever still waits here queues again, behind everyone already in ZooKeeper
    try {
      await node.release();
      return 'released';
    } catch (error) {
      if (error instanceof LockLostError) return 'session-lost';
      throw error;
    }
  }

  /** Whether another entry than ours is in the ZooKeeper queue (when unsure: yes). */
  private async othersWaiting(node: GrantedLock): Promise<boolean> {
    const parent = node.path.slice(0, node.path.lastIndexOf('/'));
    try {
      return (await readChildren(node.session, parent, undefined)).children.length > 1;
    } catch {
      return true; // the session ended or the read failed: the node goes, and the release tells
    }
  }

  /** The session ended: the holder hears it from its own handle; the queue starts over. */
  private nodeLost(node: GrantedLock): void {
    if (this.node !== node) return;
    this.node = undefined;
    this.forgetNodeSession = undefined;
    this.holding = false;
    this.pump();
  }

  /** A waiter's timeout or signal ended its wait. */
  private giveUp(waiter: LocalWaiter): void {
    if (waiter.done) return;
    const stopper = waiter.stopper!;
    const error = stopper.explain(stopper.signal.reason, this.resource);
    if (this.line.live === 1 && this.acquiring?.signal) {
      // The last caller the node was queued for: stop the ZooKeeper acquire, and answer this caller
      // once its node is gone, as a caller with a node of its own is answered.
      this.retire(waiter);
      this.leaving = () => waiter.reject(error);
      this.acquiring.abort();
      return;
    }
    this.finish(waiter, undefined, error);
    this.forgetIfIdle();
  }

  /** Answers the caller that stopped the last ZooKeeper acquire, now that it has ended. */
  private answerLeaving(): void {
    const leaving = this.leaving;
    if (!leaving) return;
    this.leaving = undefined;
    leaving();
    this.forgetIfIdle();
  }

  private finish(waiter: LocalWaiter, lock: GrantedLock | null | undefined, error?: unknown): void {
    if (waiter.done) return;
    this.retire(waiter);
    if (lock === undefined) waiter.reject(error);
    else waiter.resolve(lock);
  }

  /** The waiter leaves the queue: it will be answered by whoever retired it. */
  private retire(waiter: LocalWaiter): void {
    this.line.retire(waiter);
    if (waiter.stopper) {
      waiter.stopper.signal.removeEventListener('abort', waiter.onStop!);
      waiter.stopper.dispose();
    }
  }

  private forgetIfIdle(): void {
    if (!this.node && !this.acquiring && !this.holding && this.line.live === 0 && !this.leaving) this.forget();
  }
}

/**
 * Leader election: leadership is holding the head of the group's fair queue while the session's
 * lease runs. A leader is exactly an exclusive lock's holder, so it is told before anyone else can
 * lead (the lease), and each term has a fencing token above every earlier one. A candidacy waits
 * in the queue, leads, and when the term ends (lost, resigned) queues again, in a fresh session
 * when the old one ended, until it is closed.
 *
 * Needs no Nest: `new Candidacy(connection, 'relay').leadership()`.
 *
 * Error handling: a term that is lost ends with `signal` aborting (LeadershipLostError); the
 * candidacy queues again by itself. Failures that retrying cannot cure (the group's path is used
 * by a lock, ZooKeeper's history went back, an ACL refuses us) end the candidacy: `leadership()`
 * rejects with that error and `state` is `'failed'`. Others (a create refused while connecting) are
 * reported to `onBackgroundError` and retried.
 */
import { hostname } from 'node:os';
import { ElectionClosedError, IncompatibleLockError, InvalidOptionsError, LockAbortedError, LockOperationError, ZkRollbackError } from '../errors.js';
import { electionDriver, type LockDriver } from '../queue/lock-driver.js';
import { curatorLatchDriver, kazooLockDriver } from '../queue/foreign-drivers.js';
import { DEFAULT_LAYOUT, type LockLayout, validateLayout } from '../queue/layouts.js';
import { lockHolders } from '../queue/lock-holders.js';
import type { SessionSource } from '../queue/queue.types.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import { ZkNoAuthError } from '../zookeeper/zk-errors.js';
import { LeaderTerm, type LeaderHandle } from './leader-handle.js';
import { QueueLock } from './queue-lock.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import { type RecipeOptions, RecipeRuntime, runtimeOf } from './recipe-runtime.js';
import type { Candidate } from './recipe.options.js';
import { idOfData, nodeData, validateId } from './participant-node.js';
import { pause } from '../shared/promises.js';
import { Backoff } from '../shared/backoff.js';
import {
  type CandidacyOptions,
  type CandidacyState,
  DEFAULT_RETRY_DELAY_MS,
  DEFAULT_STOP_GRACE_MS,
  type LeadershipChange,
  MAX_RETRY_DELAY_MS,
} from './candidacy.options.js';

export type { CandidacyOptions, CandidacyState, LeadershipChange } from './candidacy.options.js';

/** The driver for each layout's election recipe (kazoo's Election is its Lock). */
const ELECTION_DRIVERS: Record<LockLayout, LockDriver> = {
  'nestjs-zk-lock': electionDriver,
  curator: curatorLatchDriver,
  kazoo: kazooLockDriver,
};

/** One participant of one election: joins at once, leads in turn, queues again after each term. */
export class Candidacy {
  readonly group: string;
  readonly id: string;
  readonly layout: LockLayout;
  /** The group's znode. */
  readonly path: string;
  private readonly runtime: RecipeRuntime;
  private readonly recipe: QueueLock;
  private readonly data: Buffer;
  private readonly stopGraceMs: number;
  /** The pause before queueing again after a failure that may pass. */
  private readonly retries: Backoff;
  private readonly onRetry: (error: unknown) => void;
  private readonly closing = new AbortController();
  private term: LeaderTerm | undefined = undefined;
  private failure: Error | undefined = undefined;
  private closed = false;
  /** When, on performance.now()'s clock, the next queueing may start (resign's requeueAfterMs). */
  private requeueAt = 0;
  /** When the candidacy failed, on performance.now()'s clock. @internal */
  failedAt: number | undefined = undefined;
  private readonly waiting = new Set<{ resolve: (handle: LeaderHandle) => void; reject: (error: unknown) => void }>();
  private readonly listeners = new Set<(change: LeadershipChange) => void>();
  /** The loop: settles when the candidacy has left the queue for good (closed, or failed). @internal */
  readonly left: Promise<void>;
  private decide: (leads: boolean) => void = () => undefined;
  /**
   * Settles once the first term is decided: true when this instance leads it, false when it waits
   * behind another participant (or failed, or was closed first). It costs the one round trip of
   * joining (create and list); a term that ends later does not change it.
   */
  readonly decided: Promise<boolean> = new Promise((resolve) => {
    this.decide = resolve;
  });

  /**
   * Joins the election at once.
   * @throws InvalidResourceNameError for a group that cannot be a path; InvalidOptionsError for a
   *   bad id, layout or zkPath.
   */
  constructor(connection: ZkConnectionLike, group: string, options?: CandidacyOptions, recipeOptions?: RecipeOptions);
  /** @internal a session source of its own (tests), or the runtime LockService's recipes share */
  constructor(source: SessionSource | RecipeRuntime, group: string, options?: CandidacyOptions, recipeOptions?: RecipeOptions);
  constructor(source: SessionSource | RecipeRuntime, group: string, options: CandidacyOptions = {}, recipeOptions?: RecipeOptions) {
    this.runtime = runtimeOf(source, recipeOptions);
    this.layout = validateLayout(options.layout) ?? DEFAULT_LAYOUT;
    this.path = this.runtime.pathFor(group, options.zkPath);
    this.group = group;
    this.id = validateId(options.id ?? `${hostname()}:${process.pid}`);
    this.data = nodeData(this.id, this.layout);
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.retries = new Backoff(options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS, Math.max(MAX_RETRY_DELAY_MS, options.retryDelayMs ?? 0));
    this.onRetry = options.onRetry ?? ((error) => this.runtime.remover.report(error));
    this.recipe = new QueueLock(this.runtime, ELECTION_DRIVERS[this.layout]);
    this.left = this.run(options.zkPath);
  }

  get state(): CandidacyState {
    if (this.closed) return 'closed';
    if (this.failure) return 'failed';
    return this.current ? 'leading' : 'following'; // not while a term that was told it ended waits for its node to go
  }

  /** Why the candidacy ended, when `state` is `'failed'`. */
  get error(): Error | undefined {
    return this.failure;
  }

  /** Whether this instance leads now: the term holds and its lease runs (read from the clock). */
  isLeader(): boolean {
    return this.term?.isHeld() ?? false;
  }

  /** The current term, when this instance leads. */
  get current(): LeaderHandle | undefined {
    return this.term && !this.term.signal.aborted ? this.term : undefined;
  }

  /**
   * Resolves with the term once this instance leads (at once when it does).
   * @param signal stops waiting (LockAbortedError); the candidacy itself goes on.
   * @throws ElectionClosedError after close; the candidacy's error once it failed.
   */
  leadership(signal?: AbortSignal): Promise<LeaderHandle> {
    const current = this.current;
    if (current) return Promise.resolve(current);
    if (this.closed) return Promise.reject(new ElectionClosedError(this.group));
    if (this.failure) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(new LockAbortedError(this.group, signal.reason));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.waiting.delete(waiter);
        reject(new LockAbortedError(this.group, signal?.reason));
      };
      const waiter = {
        resolve: (handle: LeaderHandle) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(handle);
        },
        reject: (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.add(waiter);
    });
  }

  /** Listens to changes of this instance's leadership; returns the function that stops listening. */
  onChange(listener: (change: LeadershipChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The ids of the participants in queue order, the leader first (read from ZooKeeper). */
  async participants(signal?: AbortSignal): Promise<string[]> {
    const session = await this.runtime.sessions.session(signal);
    const { children } = await readChildren(session, this.path, signal);
    const { queue } = lockHolders(children, this.layout, false);
    const nodes = await Promise.all(queue.map((entry) => readNode(session, `${this.path}/${entry.name}`, signal)));
    return nodes.flatMap((node) => (node ? [idOfData(node.data)] : []));
  }

  /** The current leader's id, or undefined when nobody leads (read from ZooKeeper). */
  async leader(signal?: AbortSignal): Promise<string | undefined> {
    return (await this.participants(signal))[0];
  }

  /**
   * Gives leadership up and queues again at the back: `signal` aborts, the leader's work gets up to
   * stopGraceMs to stop, the node is deleted. Resolves true once done; false when this instance did
   * not lead (nothing changes). With `requeueAfterMs`, it queues again only after that long (so
   * that a leader that cannot do its work stays out of the line for a while).
   */
  async resign(options: { requeueAfterMs?: number } = {}): Promise<boolean> {
    const { term } = this;
    if (!term || term.signal.aborted) return false;
    if (options.requeueAfterMs !== undefined) {
      if (!(options.requeueAfterMs >= 0)) throw new InvalidOptionsError('requeueAfterMs', `must be a number of ms, 0 or more, got ${String(options.requeueAfterMs)}`);
      this.requeueAt = performance.now() + options.requeueAfterMs;
    }
    await term.giveUp('resigned');
    return true;
  }

  /**
   * Leaves the election: a leader gives up as in `resign`, a follower's node is deleted. Resolves
   * once this participant's node is gone. Idempotent.
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.decide(false);
      await this.term?.giveUp('left');
      this.closing.abort(new ElectionClosedError(this.group));
      this.settleWaiting(new ElectionClosedError(this.group));
    }
    await this.left;
  }

  private async run(zkPath: string | undefined): Promise<void> {
    const candidate: Candidate = {
      waiting: () => {
        this.retries.reset(); // queued: a failure after this one is not "in a row"
        this.decide(false);
      },
      term: (group, grant) => new LeaderTerm(group, grant, this.id, this.stopGraceMs, this.onRetry),
    };
    while (!this.closed) {
      const wait = this.requeueAt - performance.now();
      if (wait > 0) await pause(wait, this.closing.signal);
      if (this.closed) return;
      const queuedAt = performance.now();
      let term: LeaderTerm;
      try {
        term = (await this.recipe.acquire(this.group, { zkPath, data: this.data, signal: this.closing.signal, candidate })) as LeaderTerm; // (candidate.term made it)
        if (this.closed) return void (await term.giveUp('left')); // closed while the grant was on its way: the term's retried delete
      } catch (error) {
        if (this.closed) return;
        if (isFinal(error)) return this.fail(error as Error);
        this.onRetry(error);
        await pause(this.retries.next(), this.closing.signal);
        continue;
      }
      this.retries.reset();
      if (term.signal.aborted) continue; // lost before it began: never announced, queue again
      this.term = term;
      const electedAt = performance.now();
      // Told when the term's signal aborts (before the next leader can start), not when the node has gone.
      term.signal.addEventListener(
        'abort',
        () => this.emit({ leader: false, fencingToken: term.fencingToken, leadMs: performance.now() - electedAt, error: term.signal.reason as Error }),
        { once: true },
      );
      this.decide(true);
      this.emit({ leader: true, fencingToken: term.fencingToken, waitMs: electedAt - queuedAt });
      for (const waiter of this.takeWaiting()) waiter.resolve(term);
      await term.ended;
      this.term = undefined;
    }
  }

  private fail(error: Error): void {
    this.failure = error;
    this.failedAt = performance.now();
    this.decide(false);
    this.settleWaiting(error);
    this.emit({ leader: false, error });
  }

  private settleWaiting(error: Error): void {
    for (const waiter of this.takeWaiting()) waiter.reject(error);
  }

  private takeWaiting(): { resolve: (handle: LeaderHandle) => void; reject: (error: unknown) => void }[] {
    const all = [...this.waiting];
    this.waiting.clear();
    return all;
  }

  private emit(change: LeadershipChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.runtime.remover.report(error);
      }
    }
  }
}

/** Errors a new attempt would meet again. */
function isFinal(error: unknown): boolean {
  return (
    error instanceof IncompatibleLockError ||
    error instanceof ZkRollbackError ||
    error instanceof InvalidOptionsError ||
    error instanceof LockAbortedError ||
    (error instanceof LockOperationError && error.cause instanceof ZkNoAuthError)
  );
}

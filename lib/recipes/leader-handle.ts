import { LeadershipLostError, LockLostError, LockNotHeldError } from '../errors.js';
import type { GrantedLock } from './granted-lock.js';
import type { HeldLock } from './lock-handle.js';
import { Backoff } from '../shared/backoff.js';

/**
 * One term of leadership: this instance leads the group until `signal` aborts. Read it like a held
 * lock (`fencingToken`, `validUntil`, `isHeld`, `assertHeld`); `heldLock(group)` gives it inside a
 * `@Leader` method.
 */
export interface LeaderHandle extends HeldLock {
  /** The group led. Also `resource`. */
  readonly group: string;
  /** This participant's id, as stored in its node. */
  readonly id: string;
  /**
   * Tells the election that the leader's work runs until `role` settles: when this instance gives
   * leadership up (resign, close, shutdown), `signal` aborts first, and its node (so the next
   * leader's turn) waits until `role` settled, or the election's grace passed (shutdownGraceMs;
   * the recipe's stopGraceMs). A lost term waits for nothing: the next leader may already lead.
   * `@Leader` and `@OnLeadership` call it with the method's promise.
   */
  stopsWith(role: Promise<unknown>): void;
}

const NEVER = new AbortController().signal;
/** How often a voluntary end tries to delete its node, and the pauses between (0.4 s doubling to 3.2 s). */
const DELETE_ATTEMPTS = 5;
const DELETE_FIRST_PAUSE_MS = 400;
const DELETE_LAST_PAUSE_MS = 3200;

/**
 * A term over the lock that grants it (the head of the group's queue). Its own `signal` aborts
 * before the node is touched: on a voluntary end (resign, close) the role is told first, given up to
 * `graceMs` to stop (`stopsWith`), and only then is the node deleted, so the next leader starts
 * after this one stopped. On a loss it aborts as the lock's signal does: before anyone else can lead.
 */
export class LeaderTerm implements LeaderHandle {
  readonly resource: string;
  readonly fencingToken: string;
  /** Resolves once, when the term is over (after the node is deleted, for a voluntary end); `signal.reason` says how. */
  readonly ended: Promise<void>;
  private readonly controller = new AbortController();
  private finish!: () => void;
  /** The work still running (settled ones leave, so a job run every second keeps this small). */
  private readonly roles = new Set<Promise<void>>();

  constructor(
    readonly group: string,
    readonly id: string,
    private readonly lock: GrantedLock,
    private readonly graceMs: number,
    /** Told of a failed delete that is tried again. */
    private readonly onDeleteError: (error: unknown) => void = () => undefined,
  ) {
    this.resource = group;
    this.fencingToken = lock.fencingToken;
    this.ended = new Promise((resolve) => (this.finish = resolve));
    // A node deleted by someone else ends the term at once (not first: that is outside the guarantee).
    lock.watchForRelease('notify');
    // A lock can be born lost (its session ended between the grant and now): the term ends at once.
    if (lock.signal.aborted) this.lost(lock.signal.reason);
    else lock.signal.addEventListener('abort', () => this.lost(lock.signal.reason), { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Leadership is never released on request: resign instead. Never aborts. */
  get releaseRequested(): AbortSignal {
    return NEVER;
  }

  get validUntil(): number {
    return this.controller.signal.aborted ? Number.NEGATIVE_INFINITY : this.lock.validUntil;
  }

  isHeld(): boolean {
    return !this.controller.signal.aborted && this.lock.isHeld();
  }

  assertHeld(forMs = 0): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason as LeadershipLostError;
    try {
      this.lock.assertHeld(forMs);
    } catch (error) {
      if (error instanceof LockLostError) throw new LeadershipLostError(this.group, this.fencingToken, error.detail, error.reason, 'lost');
      if (error instanceof LockNotHeldError) throw new LeadershipLostError(this.group, this.fencingToken, 'it was released', 'session-ended', 'lost');
      throw error;
    }
  }

  stopsWith(role: Promise<unknown>): void {
    const running: Promise<void> = role.then(
      () => void this.roles.delete(running),
      () => void this.roles.delete(running),
    );
    this.roles.add(running);
  }

  /**
   * Gives leadership up: `signal` aborts, the role gets up to graceMs to stop, then the node is
   * deleted. Resolves once the node is gone (or the session had ended meanwhile).
   */
  async giveUp(end: 'resigned' | 'left'): Promise<void> {
    if (this.controller.signal.aborted) return void (await this.ended); // ending already: the signal aborts first thing
    const detail = end === 'resigned' ? 'this instance resigned' : 'this instance left the election';
    const error = new LeadershipLostError(this.group, this.fencingToken, detail, 'given-up', end);
    this.controller.abort(error);
    if (this.roles.size > 0) await settledWithin([...this.roles], this.graceMs);
    await this.deleteNode();
    this.finish();
  }

  /**
   * Deletes the node (the release retries connection loss itself). Another failure (an ACL changed
   * under it) is tried again a few times: a node left behind would keep every participant waiting
   * behind a leader that has gone, until its session ends.
   */
  private async deleteNode(): Promise<void> {
    const backoff = new Backoff(DELETE_FIRST_PAUSE_MS, DELETE_LAST_PAUSE_MS);
    for (;;) {
      try {
        return await this.lock.release();
      } catch (error) {
        if (error instanceof LockLostError || error instanceof LockNotHeldError || backoff.count + 1 >= DELETE_ATTEMPTS) return; // gone with its session, or left to it
        this.onDeleteError(error);
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
  }

  private lost(reason: unknown): void {
    if (this.controller.signal.aborted) return;
    const cause = reason instanceof LockLostError ? reason : undefined;
    const error = new LeadershipLostError(
      this.group,
      this.fencingToken,
      cause?.detail ?? 'its ZooKeeper session ended',
      cause?.reason ?? 'session-ended',
      'lost',
    );
    this.controller.abort(error);
    this.finish();
  }
}

async function settledWithin(roles: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(roles), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

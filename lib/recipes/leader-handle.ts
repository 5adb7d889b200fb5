import { LeadershipLostError, type LockLossReason, LockLostError, LockNotHeldError } from '../errors.js';
import type { QueueGrant } from '../queue/queue.types.js';
import { GrantedLock } from './granted-lock.js';
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
 * A term is the lock that grants it (the head of the group's queue): the lock's signal, lease and
 * state are the term's, its losses worded as leadership (LeadershipLostError, end `lost`), so it
 * aborts as the lock does, before anyone else can lead. What it adds is the voluntary end (resign,
 * close): the signal aborts first, the role gets up to `graceMs` to stop (`stopsWith`), and only
 * then is the node deleted, so the next leader starts after this one stopped.
 */
export class LeaderTerm extends GrantedLock implements LeaderHandle {
  /** Resolves once, when the term is over (after the node is deleted, for a voluntary end); `signal.reason` says how. */
  readonly ended: Promise<void>;
  private finish!: () => void;
  /** The work still running (settled ones leave, so a job run every second keeps this small). */
  private readonly roles = new Set<Promise<void>>();

  constructor(
    group: string,
    grant: QueueGrant,
    readonly id: string,
    private readonly graceMs: number,
    /** Told of a failed delete that is tried again. */
    private readonly onDeleteError: (error: unknown) => void,
  ) {
    super(group, grant, undefined);
    this.ended = new Promise((resolve) => (this.finish = resolve));
    // A node deleted by someone else ends the term at once (not first: that is outside the guarantee).
    this.watchForRelease('notify');
    // A loss ends the term at once, even one before this line (born lost: the session ended at the grant).
    // Every loss is worded by lossError below (end 'lost'); a voluntary end finishes in giveUp.
    const { signal } = this;
    const onAbort = (): void => {
      if ((signal.reason as LeadershipLostError).end === 'lost') this.finish();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }

  get group(): string {
    return this.resource;
  }

  /** Leadership is never released on request: resign instead. Never aborts. */
  override get releaseRequested(): AbortSignal {
    return NEVER;
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
    if (this.signal.aborted) return void (await this.ended); // ending already: the signal aborts first thing
    const detail = end === 'resigned' ? 'this instance resigned' : 'this instance left the election';
    this.stopHolder(new LeadershipLostError(this.group, this.fencingToken, detail, 'given-up', end));
    if (this.roles.size > 0) await settledWithin([...this.roles], this.graceMs);
    await this.deleteNode();
    this.finish();
  }

  protected override lossError(detail: string, reason: LockLossReason): LockLostError {
    return new LeadershipLostError(this.resource, this.fencingToken, detail, reason, 'lost');
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
        return await this.release();
      } catch (error) {
        if (error instanceof LockLostError || error instanceof LockNotHeldError || backoff.count + 1 >= DELETE_ATTEMPTS) return; // gone with its session, or left to it
        this.onDeleteError(error);
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
  }
}

async function settledWithin(roles: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(roles), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

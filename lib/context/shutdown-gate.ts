import { setMaxListeners } from 'node:events';
import { LockAbortedError, LockServiceClosedError, ZkConnectionError } from '../errors.js';
import type { GrantedLock } from '../recipes/granted-lock.js';

/** The reason the waits still queued at shutdown are stopped with. */
const SHUTTING_DOWN = Symbol('the application is shutting down');
const TAKEN_AWAY_BECAUSE = 'the application is shutting down';

/**
 * What shutdown does to one LockService's locks: the locks taken, refusing new ones once shutdown began, the
 * holders' grace period, then taking what is left away (GrantedLock.takeAway); and it tells the
 * callers still waiting that the service closed (LockServiceClosedError). LockService drives it
 * (`begin`, `finish`); no Nest in here.
 *
 * An acquire reads and writes the three fields below itself, so that a lock taken and given back
 * calls nothing here: `closing` refuses a new lock (LockAcquirer.take and holder, ReentrantLocks'
 * acquire in a context) and makes a late grant a lock to take away (LockAcquirer's adopt); `held`
 * and `allReleased` are kept by adopt and forget.
 */
export class ShutdownGate {
  /** The locks taken from ZooKeeper and held now: added at the grant, deleted at their end (GrantedLock's onEnd). */
  readonly held = new Set<GrantedLock>();
  /** Set while `begin` waits for the holders: called when the last of `held` ends. */
  allReleased: (() => void) | undefined;
  /** Shutdown has begun: no new lock. Set only here. */
  closing = false;
  /**
   * Ends the waits still queued at shutdown when the connection is supplied: closing a session of
   * our own ends them, but a supplied connection outlives the service. Only their acquires carry it,
   * so a wait with neither timeout nor signal keeps its controller-free path on our own session.
   */
  readonly stopWaits: AbortController | undefined;

  constructor(
    private readonly graceMs: number,
    connectionSupplied: boolean,
    /** Failures of the releases at shutdown (LockService logs them). */
    private readonly warn: (message: string) => void,
  ) {
    if (connectionSupplied) {
      this.stopWaits = new AbortController();
      setMaxListeners(0, this.stopWaits.signal); // one listener per waiting call, however many
    }
  }

  /** How many locks taken from ZooKeeper are held now. */
  get heldCount(): number {
    return this.held.size;
  }

  /** @throws LockServiceClosedError once shutdown has begun */
  assertOpen(resource: string): void {
    if (this.closing) throw new LockServiceClosedError(resource);
  }

  /** The signal a wait stops on: the caller's, and shutdown's when the connection is supplied. */
  waitSignal(caller: AbortSignal | undefined): AbortSignal | undefined {
    if (!this.stopWaits) return caller;
    return caller ? AbortSignal.any([caller, this.stopWaits.signal]) : this.stopWaits.signal;
  }

  /**
   * A lock asked for before shutdown began and granted after (already in `held`): the grace period
   * holds for it too, then it is taken away (shutdown may have found nothing held and gone on already).
   */
  grantedLate(lock: GrantedLock): void {
    setTimeout(() => void this.takeAway(lock), this.graceMs).unref();
  }

  /**
   * The error a waiting caller gets: shutdown closing the session (or stopping the wait) under it is
   * the service closing, not a ZooKeeper to go and check or a signal of its own.
   */
  explain(error: unknown, resource: string): unknown {
    const endedByShutdown = error instanceof ZkConnectionError || (error instanceof LockAbortedError && error.cause === SHUTTING_DOWN);
    return this.closing && endedByShutdown ? new LockServiceClosedError(resource, { cause: error }) : error;
  }

  /** Shutdown begins: refuse new locks, wait up to the grace period for the holders, take the rest away. */
  async begin(): Promise<void> {
    this.closing = true;
    if (this.held.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.graceMs);
        this.allReleased = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.allReleased = undefined;
    }
    await this.takeAwayAll();
  }

  /** Shutdown ends: stop the waits a supplied connection would keep, take away anything left. */
  async finish(): Promise<void> {
    this.closing = true;
    this.stopWaits?.abort(SHUTTING_DOWN);
    await this.takeAwayAll();
  }

  private async takeAwayAll(): Promise<void> {
    await Promise.all([...this.held].map((lock) => this.takeAway(lock)));
  }

  private async takeAway(lock: GrantedLock): Promise<void> {
    try {
      await lock.takeAway(TAKEN_AWAY_BECAUSE);
    } catch (error) {
      this.warn(`Releasing a lock at shutdown failed: ${String(error)}`);
    }
  }
}

import { LockLostError, LockNotHeldError } from '../errors.js';
import type { GrantedLock } from '../recipes/granted-lock.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import type { MinimumHolds } from './minimum-holds.js';

/** One lock a lock context holds, shared by its holders inside the context. */
export interface HeldEntry {
  readonly lock: GrantedLock;
  holders: number;
  /** A semaphore's permits. */
  readonly permits?: number;
}

/** The locks a lock context holds (LockContext.held), by key. */
interface HeldLocks {
  readonly held: Map<string, HeldEntry>;
}

/** A holder's share of a lock its lock context holds: the context's entry for it, under its key. */
interface ContextShare {
  readonly context: HeldLocks;
  readonly key: string;
  readonly entry: HeldEntry;
}

/**
 * What a handle's release runs besides the hold count, given when the handle is made (its order is
 * fixed: the minimum hold first, the hold count, then `onReleased`).
 */
export interface ReleaseHooks {
  /** `holdAtLeastMs`: the lock stays held until this many ms after the grant, kept by `holds`; the caller's release resolves at once. */
  readonly minimumHold?: { readonly ms: number; readonly holds: MinimumHolds };
  /** Told after the lock is given back, with the error when that failed (events and spans, when recorded). */
  readonly onReleased?: (error?: unknown) => void;
}

/**
 * The one handle a LockService caller gets for a lock it must share or report: one holder of one
 * granted node. Its release runs, in order: the minimum hold (`holdAtLeastMs` defers the rest, in
 * the background), the hold count (the node is given back when the context's last holder lets go),
 * then the report (events and spans). A lock taken outside any context with nothing to report is
 * the GrantedLock itself, with no handle around it.
 */
export class HolderHandle implements LockHandle {
  private released = false;
  /** The minimum hold's end (`performance.now()`'s clock), 0 without one. */
  private readonly holdUntil: number;
  /** The context's entry this holder counts in; undefined for a lock taken outside any context. */
  private readonly share: ContextShare | undefined;
  /** The context already held this lock, or was taking it for another holder: ZooKeeper was not asked. */
  readonly reentrant: boolean;

  /**
   * One holder of `lock`; with `context`, one more holder of it in that context, under `key` (the
   * request's: its slot and lock) with a semaphore's `permits`.
   */
  constructor(
    readonly lock: GrantedLock,
    private readonly hooks: ReleaseHooks = NO_HOOKS,
    context?: HeldLocks,
    key = '',
    permits?: number,
  ) {
    // Made at the grant (or the join): the minimum hold counts from here.
    this.holdUntil = hooks.minimumHold ? performance.now() + hooks.minimumHold.ms : 0;
    if (!context) {
      this.share = undefined;
      this.reentrant = false;
      return;
    }
    let entry = context.held.get(key);
    this.reentrant = entry?.lock === lock;
    if (!entry || !this.reentrant) {
      entry = { lock, holders: 0, permits };
      context.held.set(key, entry);
    }
    entry.holders += 1;
    this.share = { context, key, entry };
  }

  get resource(): string {
    return this.lock.resource;
  }

  get fencingToken(): string {
    return this.lock.fencingToken;
  }

  get signal(): AbortSignal {
    return this.lock.signal;
  }

  get releaseRequested(): AbortSignal {
    return this.lock.releaseRequested;
  }

  get validUntil(): number {
    return this.released ? Number.NEGATIVE_INFINITY : this.lock.validUntil;
  }

  isHeld(): boolean {
    return !this.released && this.lock.isHeld();
  }

  assertHeld(forMs?: number): void {
    if (this.released) throw new LockNotHeldError(this.resource);
    this.lock.assertHeld(forMs);
  }

  release(): Promise<void> {
    const { hooks, share } = this;
    // Outside any context, without a minimum hold: the lock's own release (a failed one may be retried), reported.
    if (!share && !hooks.minimumHold) return this.reported(this.lock.release());
    if (this.released) return Promise.reject(new LockNotHeldError(this.lock.resource));
    this.released = true;
    if (hooks.minimumHold) return hooks.minimumHold.holds.releaseAt(this.lock, this.holdUntil, () => this.giveBack());
    const releasing = this.releaseShare(share!); // (no minimum hold: then it has a share)
    return hooks.onReleased ? this.reported(releasing) : releasing;
  }

  /** The hold count, then the report. */
  private giveBack(): Promise<void> {
    return this.reported(this.share ? this.releaseShare(this.share) : this.lock.release());
  }

  private reported(releasing: Promise<void>): Promise<void> {
    const { onReleased } = this.hooks;
    if (!onReleased) return releasing;
    return releasing.then(
      () => onReleased(),
      (error: unknown) => {
        onReleased(error ?? new Error('release failed'));
        throw error;
      },
    );
  }

  private async releaseShare({ context, key, entry }: ContextShare): Promise<void> {
    entry.holders -= 1;
    const { signal } = this.lock;
    if (entry.holders > 0) {
      if (signal.aborted) throw signal.reason;
      return;
    }
    const registered = context.held.get(key) === entry;
    if (registered) context.held.delete(key);
    if (signal.aborted) throw signal.reason; // lost or taken away: nothing left to release
    try {
      await this.lock.release();
    } catch (error) {
      if (error instanceof LockLostError) throw error; // nothing left to release
      // The node is still there: put everything back so the caller can retry (its own release, not a
      // minimum hold's, whose caller was answered already).
      if (!this.hooks.minimumHold) this.released = false;
      entry.holders += 1;
      if (registered) context.held.set(key, entry);
      throw error;
    }
  }
}

const NO_HOOKS: ReleaseHooks = {};

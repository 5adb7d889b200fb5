import { LockLostError, LockNotHeldError } from '../errors.js';
import type { HeldEntry, LockContext } from './lock-context.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import type { HeldLock } from '../recipes/held-lock.js';

/**
 * One holder's share of a lock held by a context. Each acquire inside the context gets its own
 * handle (released once, like any handle); the ZooKeeper node is deleted when the last one is released.
 */
export class ReentrantHandle implements LockHandle {
  private released = false;

  private constructor(
    private readonly context: LockContext,
    private readonly key: string,
    private readonly entry: HeldEntry,
  ) {}

  /** Registers one more holder of `lock` in `context`, under `key` (its slot and resource). */
  static join(context: LockContext, key: string, lock: HeldLock, permits?: number): ReentrantHandle {
    let entry = context.held.get(key);
    if (!entry || entry.lock !== lock) {
      entry = { lock, holders: 0, permits };
      context.held.set(key, entry);
    }
    entry.holders += 1;
    return new ReentrantHandle(context, key, entry);
  }

  get resource(): string {
    return this.entry.lock.resource;
  }

  get fencingToken(): string {
    return this.entry.lock.fencingToken;
  }

  get signal(): AbortSignal {
    return this.entry.lock.signal;
  }

  get validUntil(): number {
    return this.released ? Number.NEGATIVE_INFINITY : this.entry.lock.validUntil;
  }

  isHeld(): boolean {
    return !this.released && this.entry.lock.isHeld();
  }

  assertHeld(forMs?: number): void {
    if (this.released) throw new LockNotHeldError(this.resource);
    this.entry.lock.assertHeld(forMs);
  }

  async release(): Promise<void> {
    if (this.released) throw new LockNotHeldError(this.resource);
    this.released = true;
    this.entry.holders -= 1;
    if (this.entry.holders > 0) {
      if (this.signal.aborted) throw this.signal.reason;
      return;
    }
    const registered = this.context.held.get(this.key) === this.entry;
    if (registered) this.context.held.delete(this.key);
    if (this.signal.aborted) throw this.signal.reason; // lost or revoked: nothing left to release
    try {
      await this.entry.lock.release();
    } catch (error) {
      if (error instanceof LockLostError) throw error; // nothing left to release
      // The node is still there: put everything back so the caller can retry.
      this.released = false;
      this.entry.holders += 1;
      if (registered) this.context.held.set(this.key, this.entry);
      throw error;
    }
  }
}

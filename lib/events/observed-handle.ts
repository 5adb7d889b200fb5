import type { LockHandle } from '../recipes/lock-handle.js';

/**
 * The caller's handle while events or spans are recorded: the same lock, and its release is
 * reported (`released(error)` when it failed).
 */
export class ObservedHandle implements LockHandle {
  constructor(
    private readonly inner: LockHandle,
    private readonly released: (error?: unknown) => void,
  ) {}

  get resource(): string {
    return this.inner.resource;
  }

  get fencingToken(): string {
    return this.inner.fencingToken;
  }

  get signal(): AbortSignal {
    return this.inner.signal;
  }

  get releaseRequested(): AbortSignal {
    return this.inner.releaseRequested;
  }

  get validUntil(): number {
    return this.inner.validUntil;
  }

  isHeld(): boolean {
    return this.inner.isHeld();
  }

  assertHeld(forMs?: number): void {
    this.inner.assertHeld(forMs);
  }

  async release(): Promise<void> {
    try {
      await this.inner.release();
    } catch (error) {
      this.released(error ?? new Error('release failed'));
      throw error;
    }
    this.released();
  }
}

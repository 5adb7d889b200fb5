import type { LockHandle } from './lock-handle.js';

/**
 * A handle that is another handle with something added to its release (events that report it, a
 * minimum hold that defers it): everything else is the inner handle's.
 */
export abstract class ForwardingHandle implements LockHandle {
  constructor(protected readonly inner: LockHandle) {}

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

  abstract release(): Promise<void>;
}

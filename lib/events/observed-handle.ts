import { ForwardingHandle } from '../recipes/forwarding-handle.js';
import type { LockHandle } from '../recipes/lock-handle.js';

/**
 * The caller's handle while events or spans are recorded: the same lock, and its release is
 * reported (`released(error)` when it failed).
 */
export class ObservedHandle extends ForwardingHandle {
  constructor(
    inner: LockHandle,
    private readonly released: (error?: unknown) => void,
  ) {
    super(inner);
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

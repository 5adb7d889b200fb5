import { setMaxListeners } from 'node:events';
import { LockAbortedError, LockTimeoutError } from '../errors.js';
import { MAX_TIMER_MS } from '../shared/durations.js';
import { toLockError } from '../zookeeper/zk-errors.js';

const TIMED_OUT = Symbol('timed out');

/** Never aborts: the stop signal of every wait with neither a timeout nor a caller's signal. */
const NEVER = new AbortController().signal;
setMaxListeners(0, NEVER);

/** Whether `signal` can ever abort (a wait that cannot needs no listener on it). */
export function mayAbort(signal: AbortSignal): boolean {
  return signal !== NEVER;
}

/**
 * One signal for "stop waiting": the caller's timeout or the caller's own signal. Without a timeout
 * it is the caller's signal itself (or one that never aborts): only a timeout costs a controller.
 */
export class Stopper {
  readonly signal: AbortSignal;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly waitTimeoutMs: number | undefined,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    // Longer than setTimeout can count is as good as forever (Node would fire it at once).
    const timed = waitTimeoutMs !== undefined && waitTimeoutMs > 0 && waitTimeoutMs <= MAX_TIMER_MS;
    if (!timed) {
      this.signal = callerSignal ?? NEVER; // the common case costs no controller
      return;
    }
    const controller = new AbortController();
    this.signal = controller.signal;
    this.timer = setTimeout(() => controller.abort(TIMED_OUT), waitTimeoutMs);
    if (!callerSignal) return;
    if (callerSignal.aborted) {
      controller.abort(callerSignal.reason);
      return;
    }
    this.onAbort = () => controller.abort(callerSignal.reason);
    callerSignal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The error a user should see for what ended the wait (ZooKeeper's errors: toLockError). */
  explain(error: unknown, resource: string): unknown {
    if (this.signal.aborted && error === this.signal.reason) {
      return this.signal.reason === TIMED_OUT
        ? new LockTimeoutError(resource, this.waitTimeoutMs ?? 0)
        : new LockAbortedError(resource, this.signal.reason);
    }
    return toLockError(error, resource);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.onAbort) this.callerSignal?.removeEventListener('abort', this.onAbort);
  }
}

import { setMaxListeners } from 'node:events';
import { LockAbortedError, LockTimeoutError } from '../errors.js';
import { MAX_TIMER_MS } from '../shared/durations.js';
import { toLockError } from '../zookeeper/zk-errors.js';

const TIMED_OUT = Symbol('timed out');

/** Never aborts: the stop signal of every wait with neither a timeout nor a caller's signal. */
export const NEVER: AbortSignal = new AbortController().signal;
setMaxListeners(0, NEVER);

/** Whether `signal` can ever abort (a wait that cannot needs no listener on it). */
export function mayAbort(signal: AbortSignal): boolean {
  return signal !== NEVER;
}

/**
 * The one way a wait is bounded (an acquire, a cohort's local waiter, a context joining its own
 * acquire in flight): a Stopper for the caller's timeout and signal, or undefined when there is
 * neither, and so nothing to stop (no object, nothing to dispose; the wait's signal is NEVER).
 * (RecipeRuntime's acquire needs one only for a timeout: the caller's signal alone is its stop
 * signal as it is, and explainStop tells its errors.)
 */
export function stopperFor(waitTimeoutMs: number | undefined, signal: AbortSignal | undefined): Stopper | undefined {
  return waitTimeoutMs === undefined && signal === undefined ? undefined : new Stopper(waitTimeoutMs, signal);
}

/**
 * Waits for `promise` within the caller's timeout and signal (see stopperFor): the promise itself
 * when there is neither (its failure as toLockError maps it); else it rejects with the typed error of whatever stopped the wait first
 * (LockTimeoutError, LockAbortedError), or of the promise's own failure (Stopper.explain).
 */
export function boundWait<T>(promise: Promise<T>, waitTimeoutMs: number | undefined, signal: AbortSignal | undefined, resource: string): Promise<T> {
  const stopper = stopperFor(waitTimeoutMs, signal);
  if (!stopper) return promise.catch((error: unknown) => Promise.reject(toLockError(error, resource)));
  const { signal: stop } = stopper;
  let onStop: () => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => {
    onStop = () => reject(stop.reason);
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
  });
  const end = (): void => {
    stop.removeEventListener('abort', onStop); // the caller's own signal outlives this wait
    stopper.dispose();
  };
  return Promise.race([promise, stopped]).then(
    (value) => (end(), value),
    (error: unknown) => {
      end();
      throw stopper.explain(error, resource);
    },
  );
}

/**
 * The error a user should see for what ended a wait that stops on `signal` (a Stopper's, or the
 * caller's own when there is no timeout): LockTimeoutError, LockAbortedError, or ZooKeeper's error
 * as toLockError maps it.
 */
export function explainStop(signal: AbortSignal, waitTimeoutMs: number | undefined, error: unknown, resource: string): unknown {
  if (signal.aborted && error === signal.reason) {
    return signal.reason === TIMED_OUT ? new LockTimeoutError(resource, waitTimeoutMs ?? 0) : new LockAbortedError(resource, signal.reason);
  }
  return toLockError(error, resource);
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
    return explainStop(this.signal, this.waitTimeoutMs, error, resource);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.onAbort) this.callerSignal?.removeEventListener('abort', this.onAbort);
  }
}

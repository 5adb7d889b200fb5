/** What a caller asks for one acquire (AcquireOptions, LockTarget), and the checked LockRequest the lock context works with. */
import { InvalidOptionsError } from '../errors.js';
import { type LockKind, validateLockKind } from '../recipes/lock-kind.js';
import { checkMs } from '../shared/durations.js';

/** Longest `owner` a caller may give, in UTF-8 bytes (lock nodes stay small). */
const MAX_OWNER_BYTES = 512;
/** Longer automatic owner labels (a long URL) are cut to this many characters. */
const AUTO_OWNER_CHARS = 200;

/** What to lock: a resource name, or a name with its own mode or semaphore permits (for acquireAll). */
export type LockTarget = string | ({ resource: string } & LockKind);

/** Options of one acquire. */
export interface AcquireOptions extends LockKind {
  /**
   * Who takes the lock, stored in its node for `inspect` (at most 512 UTF-8 bytes). Absent: the
   * request (`GET /orders/42`, with its handler) or the decorated method (`ReportJob.run`).
   * @default undefined (the label of the current request or decorated method, if any)
   */
  owner?: string;
  /**
   * How long to wait for the lock, in ms. `0` means do not wait (like tryAcquire, but throwing).
   * Absent: the module's defaultWaitTimeoutMs, which by default waits forever.
   * @default the module's defaultWaitTimeoutMs
   */
  waitTimeoutMs?: number;
  /**
   * Aborting it stops waiting with a LockAbortedError and removes the queue entry.
   * @default undefined (only waitTimeoutMs ends the wait)
   */
  signal?: AbortSignal;
}

/** Which of a context's locks on one resource: write and exclusive are one slot (they are one lock). */
export type LockSlot = 'write' | 'read' | 'simple' | 'semaphore';

/** One acquire, checked. */
export interface LockRequest {
  readonly resource: string;
  readonly slot: LockSlot;
  readonly kind: LockKind;
  readonly waitTimeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly owner: string | undefined;
}

/** Checks a caller's acquire options and resolves the defaults. */
export function checkRequest(resource: string, kind: LockKind, options: AcquireOptions, defaultWaitTimeoutMs: number | undefined): LockRequest {
  validateLockKind(kind);
  if (options.owner !== undefined && (typeof options.owner !== 'string' || Buffer.byteLength(options.owner) > MAX_OWNER_BYTES)) {
    throw new InvalidOptionsError('owner', `must be a string of at most ${MAX_OWNER_BYTES} UTF-8 bytes (it is stored in the lock node)`);
  }
  return {
    resource,
    slot: slotOf(kind),
    kind: { mode: kind.mode, permits: kind.permits },
    waitTimeoutMs: validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? defaultWaitTimeoutMs,
    signal: options.signal,
    owner: options.owner,
  };
}

/** Which context slot a kind of lock occupies: exclusive and write are one lock, so one slot. */
function slotOf(kind: LockKind): LockSlot {
  if (kind.permits !== undefined) return 'semaphore';
  if (kind.mode === 'read') return 'read';
  if (kind.mode === 'simple') return 'simple';
  return 'write';
}

/** Cuts an automatic owner label (a request line, a method name) to a size fit for a lock node. */
export function ownerLabel(label: string): string {
  return label.length > AUTO_OWNER_CHARS ? `${label.slice(0, AUTO_OWNER_CHARS)}…` : label;
}

/** A wait of any number of ms from 0, Infinity included; undefined when absent. */
export function validateWaitTimeout(value: unknown, option: string): number | undefined {
  return checkMs(value, option, { max: Infinity });
}

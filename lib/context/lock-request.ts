/**
 * What a caller asks for one acquire (AcquireOptions, LockTarget), and the checked LockRequest the
 * lock context works with (LockAcquirer.check resolves it).
 */
import { InvalidOptionsError, shown } from '../errors.js';
import type { LockKindOptions } from '../recipes/lock-kind.js';
import { checkMs } from '../shared/durations.js';
import type { LockLayout } from '../queue/layouts.js';

/** Longest `owner` a caller may give, in UTF-8 bytes (lock nodes stay small). */
export const MAX_OWNER_BYTES = 512;
/** Longer automatic owner labels (a long URL) are cut to this many characters. */
const AUTO_OWNER_CHARS = 200;

/** Where a lock's nodes are, and whose layout they follow. */
export interface LockPlacement {
  /**
   * Whose lock recipe the nodes follow: this library's own, Apache Curator's (`InterProcessMutex`,
   * `InterProcessReadWriteLock`) or kazoo's (`Lock`, `WriteLock`, `ReadLock`), so that Java and
   * Python services using those recipes on the same path are excluded too. Every client of one path
   * must use the same layout (a path holding another layout's nodes is refused).
   * @default the module's layout ('nestjs-zk-lock')
   */
  layout?: LockLayout;
  /**
   * The lock's exact ZooKeeper path, the one the other services use for it, instead of
   * `<rootPath>/<encoded resource>`; the resource is then only the lock's label (events, errors,
   * heldLock). Absolute, no `.` or `..` segments, at most 1024 UTF-8 bytes.
   * @default undefined (`<rootPath>/<encoded resource>`)
   */
  zkPath?: string;
}

/**
 * What to lock: a resource name, or a name with its own mode or semaphore permits, layout and
 * zkPath (for acquireAll).
 */
export type LockTarget = string | ({ resource: string } & LockKindOptions & LockPlacement);

/**
 * Whether a lock call joins the lock context it runs in (a request, a decorated call, a `withLock`)
 * or opens a new one:
 * - `'join'`: inside a context, a resource the context holds (or is taking) is taken again at once
 *   and counted, and the new lock is the context's (what runs in it joins that lock too); outside
 *   any context, `withLock` and decorated calls open one. What requests and calls did before this
 *   option existed.
 * - `'new'`: the lock is taken as by another request: it waits for locks the current context holds,
 *   its own ones included, and the current context never joins it. `withLock` and a decorated
 *   method run their function in that new context, where what they call joins their lock. For work
 *   a request starts without waiting for it (a fire-and-forget task) or runs beside other work
 *   (`Promise.all` branches), which must not share the request's locks. Never `await` a `'new'`
 *   acquire of a resource your own context holds: it waits for your context to release it.
 */
export type LockContextPolicy = 'join' | 'new';

/** Options of one acquire. */
export interface AcquireOptions extends LockKindOptions, LockPlacement {
  /**
   * Whether this call joins the current lock context (a request, a decorated call, a `withLock`) or
   * takes its lock as another request would: see LockContextPolicy. `'new'` on `withLock` runs `fn`
   * in a new context; on `acquire`, `tryAcquire`, `semaphore` and `acquireAll`, the handle is outside
   * any context.
   * @default 'join'
   */
  lockContext?: LockContextPolicy;
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
  /**
   * Makes the lock revocable: its holder listens for a release request from another service
   * (LockService.requestRelease, `nestjs-zk-lock revoke`, Curator's `Revoker.attemptRevoke`).
   * `'notify'`: the handle's `releaseRequested` signal aborts and the holder decides; `'release'`:
   * the lock is released at once and its `signal` aborts (LockLostError, reason `taken-away`), so the
   * next holder may start before this one stops (guard writes with the fencing token). A holder
   * whose node is deleted by a forced request learns it lost the lock either way. A downgraded read
   * is revocable on its own. A holder that joins a lock its context holds shares that lock's
   * setting: asking for another one is refused (IncompatibleLockError).
   * @default undefined (not revocable: requests are not heard)
   */
  onReleaseRequest?: 'notify' | 'release';
  /**
   * The shortest hold, in ms from the grant: a lock released earlier stays held until then, in the
   * background (the caller's `release()` resolves at once), so that instances whose clocks fire a
   * scheduled job later find it busy (ShedLock's `lockAtLeastFor`). A lost session and shutdown
   * end the hold as they end any other.
   * @default 0 (released when the caller releases it)
   */
  holdAtLeastMs?: number;
}

/**
 * Which of a context's locks on one resource: in our layout write and exclusive are one slot (they
 * are one lock); in Curator's and kazoo's they are different locks.
 */
export type LockSlot = 'write' | 'exclusive' | 'read' | 'simple' | 'semaphore';

/** One acquire, checked. */
export interface LockRequest {
  readonly resource: string;
  readonly layout: LockLayout;
  /** The lock's exact path, when the caller gave one. */
  readonly zkPath: string | undefined;
  /** Tells locks apart in a lock context: the resource in our layout, else the layout and the path or resource. */
  readonly lockId: string;
  readonly slot: LockSlot;
  /** The lock's key in a lock context (LockContext.held, pending): the LockService's scope, the slot and the lockId. */
  readonly key: string;
  readonly kind: LockKindOptions;
  readonly waitTimeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly owner: string | undefined;
  readonly onReleaseRequest: 'notify' | 'release' | undefined;
  /** The shortest hold, in ms (0: none); kept by LockService, not by the context. */
  readonly holdAtLeastMs: number;
}

/** What a LockService fills in when a caller does not say. */
export interface RequestDefaults {
  readonly waitTimeoutMs: number | undefined;
  readonly layout: LockLayout;
}

/** Checks `lockContext`; the default is `'join'`. */
export function validateLockContext(value: unknown, option = 'lockContext'): LockContextPolicy {
  if (value === undefined || value === 'join' || value === 'new') return value ?? 'join';
  throw new InvalidOptionsError(option, `must be 'join' or 'new', got ${shown(value)}`);
}

/** Checks `onReleaseRequest`. */
export function validateReleaseMode(value: unknown, option = 'onReleaseRequest'): 'notify' | 'release' | undefined {
  if (value === undefined || value === 'notify' || value === 'release') return value;
  throw new InvalidOptionsError(option, `must be 'notify' or 'release', got ${shown(value)}`);
}

/** Cuts an automatic owner label (a request line, a method name) to a size fit for a lock node. */
export function ownerLabel(label: string): string {
  return label.length > AUTO_OWNER_CHARS ? `${label.slice(0, AUTO_OWNER_CHARS)}…` : label;
}

/** A wait of any number of ms from 0, Infinity included; undefined when absent. */
export function validateWaitTimeout(value: unknown, option: string): number | undefined {
  return checkMs(value, option, { max: Infinity });
}

import type { LockKindOptions } from '../recipes/lock-kind.js';
import type { LockLayout } from '../queue/layouts.js';
import type { LockContextPolicy } from '../context/lock-request.js';

/**
 * The resource a method locks: a fixed name, or a function of the method's arguments returning a
 * name or several names (then all are taken, in one canonical order, all or nothing).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches any method's parameters
export type LockResource = string | ((...args: any[]) => string | readonly string[]);

/**
 * Options of @DistributedLock. `mode` picks the lock (exclusive by default; `read` / `write` for the
 * shared read/write lock; `simple`), `permits` makes it a semaphore; they apply to every resource
 * the method locks.
 */
export interface DistributedLockOptions extends LockKindOptions {
  /**
   * Whose lock recipe the nodes follow: this library's own, Apache Curator's or kazoo's, to share
   * the lock with Java or Python services (see LockService.acquire).
   * @default the module's layout ('nestjs-zk-lock')
   */
  layout?: LockLayout;
  /**
   * The lock's exact ZooKeeper path, the one the other services use, instead of
   * `<rootPath>/<encoded resource>`: a path, or a function of the method's arguments returning one
   * (like the resource). Only for a method that locks one resource.
   * @default undefined (`<rootPath>/<encoded resource>`)
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches any method's parameters
  zkPath?: string | ((...args: any[]) => string);
  /**
   * Makes the lock revocable by other services (LockService.requestRelease, `nestjs-zk-lock revoke`,
   * Curator's `Revoker.attemptRevoke`). `'release'`: a request takes the lock away at once and aborts
   * the method's lock signal (`heldLock(resource).signal`, LockLostError reason `taken-away`): the method
   * should stop, and the next holder may start before it has (guard its writes with the fencing
   * token). `'notify'`: only `heldLock(resource).releaseRequested` aborts; the method decides,
   * and the lock is released when it ends.
   * @default undefined (not revocable)
   */
  onReleaseRequest?: 'notify' | 'release';
  /**
   * How long to wait for the lock, in ms. `0`: do not wait. Absent: the module's
   * defaultWaitTimeoutMs, except with `onBusy: 'skip'`, where it is 0.
   * @default the module's defaultWaitTimeoutMs (0 with `onBusy: 'skip'`)
   */
  waitTimeoutMs?: number;
  /**
   * When the lock cannot be had in time: `'throw'` a LockTimeoutError (an HTTP handler answers with
   * the module's busyStatus, 409 by default), or `'skip'` the call and resolve `undefined` (the usual
   * need of a cron job that must run on one instance only).
   * @default 'throw'
   */
  onBusy?: 'throw' | 'skip';
  /**
   * The shortest hold, in ms from the grant: when the method ends sooner, the lock stays held until
   * then, released in the background (the caller does not wait). Instances whose clocks fire the
   * same tick later find it busy (ShedLock's `lockAtLeastFor`). On a @Cron or @Interval method it
   * must be at most nine tenths of the period: it counts from the grant, which comes after the tick
   * fired, and must end before the next tick fires. A lost session and shutdown end the hold.
   * @default 0 (released when the method's result settles)
   */
  holdAtLeastMs?: number;
  /**
   * On a method scheduled with `@nestjs/schedule`'s `@Cron` (a cron expression) or `@Interval`: run at
   * most once per tick across the cluster. The holder records the tick in ZooKeeper before the
   * method runs; an instance that gets the lock for a tick already recorded skips (a `skipped` event,
   * reason `ran-this-tick`). A cron tick is named by its fire time; an interval is due again when its
   * period (less a tenth, at most 1 s) has passed on ZooKeeper's clock since the last run. `false`:
   * only the lock decides. `true` on a method with neither decorator fails at start-up.
   * @default true on a method with `@Cron` or `@Interval`; nothing on others
   */
  oncePerTick?: boolean;
  /**
   * Whether a call made inside a lock context (a request, another decorated call, a `withLock`)
   * joins it, or takes its lock as another request would and runs the method in a new context:
   * `'new'` for a method a request starts without waiting for it (`this.indexer.rebuild().catch(log)`,
   * not awaited) or runs beside other work (`Promise.all`), which must not share the request's locks.
   * Never `await` a `'new'` method that locks a resource your own context holds: it waits for your
   * context to release it. See LockContextPolicy.
   * @default 'join'
   */
  lockContext?: LockContextPolicy;
}

/** What the decorator records on the method. */
export interface DistributedLockSpec {
  readonly resource: LockResource;
  readonly options: DistributedLockOptions;
  /** `Class.method`, for messages. */
  readonly method: string;
}

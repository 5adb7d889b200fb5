import type { Observable } from 'rxjs';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { AcquireOptions, LockPlacement, LockTarget } from '../context/lock-request.js';
import { type LockLayout, validateLayout } from '../queue/layouts.js';
import type { ReleaseRequestOptions, ReleaseRequestResult } from '../recipes/release-request.js';
import { currentLockContext, runByLockContextPolicy } from '../context/lock-context.js';
import { rejectOnThrow } from '../shared/promises.js';
import { acquireAll } from './acquire-all.js';
import { findHeldLock } from './held-lock-lookup.js';
import { sessionInfoOf } from './session-info.js';
import type { LockEvent, LockSessionInfo, LockSkipReason } from '../events/lock-event-types.js';
import { claimTick, type TickClaim, type TickClaimResult } from '../recipes/tick-record.js';
import type { HeldLock, LockHandle } from '../recipes/lock-handle.js';
import type { LockKindOptions } from '../recipes/lock-kind.js';
import type { InspectOptions } from '../recipes/inspect.js';
import type { LockInspection } from '../recipes/lock-inspection.js';
import type { InspectAllOptions, LockOverview } from '../recipes/inspect-all.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';
import type { ConnectionState, ConnectionStateListener } from '../zookeeper/zk-connection-like.js';
import type { Election, ElectOptions } from './election.js';
import { checkRootAcl, lockServiceParts, type LockServiceParts } from './lock-service.parts.js';

/**
 * Distributed locks for the application: one ZooKeeper session per LockService (or the connection
 * the options supply), opened at module init; at shutdown what is still held is released and the
 * session closed.
 *
 * Inside a lock context (each request; each withLock or decorated call made outside one) locks are
 * reentrant: taking a resource the context already holds succeeds at once and counts. A bare
 * `acquire` outside any context is its own. `lockContext: 'new'` (and runInNewContext) take locks
 * as another request would, for work that must not share the current context's locks.
 */
@Injectable()
export class LockService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('ZkLock');
  private readonly parts: LockServiceParts;

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    this.parts = lockServiceParts(options, this.logger);
  }

  /**
   * Connects to ZooKeeper (start-up fails with ZkConnectionError when it cannot), then checks the
   * ACL of rootPath (see rootAclCheck).
   */
  async onModuleInit(): Promise<void> {
    await this.parts.connection.connect();
    await checkRootAcl(this.parts, this.logger);
  }

  /**
   * Shutdown begins: this instance leaves its elections first (a leader's `signal` aborts, its work
   * gets shutdownGraceMs to stop, then the next instance may lead), before the providers whose
   * destroy hooks run after this one tear down what the leader's work uses.
   */
  async onModuleDestroy(): Promise<void> {
    await this.parts.elections.closeAll();
  }

  /**
   * Shutdown goes on (before the HTTP server stops taking requests): refuse new locks, give the
   * holders still running up to shutdownGraceMs to finish, then take what is still held away from
   * them: their signal aborts with a LockLostError saying the application is stopping.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.parts.holds.releaseAll(); // a minimum hold is not a holder still running: it gets no grace
    // (Elections were left at onModuleDestroy; again here for an application that skipped that hook.)
    await Promise.all([this.parts.elections.closeAll(), this.parts.shutdown.begin()]);
  }

  /**
   * Releases anything left and rejects the callers still waiting with LockServiceClosedError, then
   * closes the session unless it was supplied.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.parts.shutdown.finish();
    if (this.parts.ownsConnection) this.parts.connection.close();
    // A supplied connection outlives this service: stop listening to it.
    for (const stop of this.parts.detach.splice(0)) stop();
  }

  /**
   * Joins the election of `group` (at once) and returns this instance's part in it: it leads when
   * first in line, is told before anyone else can lead when it loses (its term's `signal` aborts),
   * and queues again by itself after each term until `close()` or shutdown. The same group again
   * returns the same Election (options left out match what it was joined with).
   * @throws InvalidResourceNameError for a group that cannot be a path; InvalidOptionsError for an
   *   empty id, one too long for its node, or a group joined before with other options;
   *   LockServiceClosedError once shutdown has begun.
   */
  elect(group: string, options: ElectOptions = {}): Election {
    this.parts.shutdown.assertOpen(group);
    return this.parts.elections.elect(group, { ...options, layout: validateLayout(options.layout) });
  }

  /**
   * Waits for the lock on `resource` and returns its handle. Release it with `handle.release()`.
   * `mode` picks exclusive (default), read, write or simple; `permits` makes it a semaphore.
   * @throws LockTimeoutError after waitTimeoutMs; LockAbortedError when `signal` aborts;
   *   InvalidResourceNameError for a name that cannot be a lock; LockUpgradeError for a write asked
   *   by a context holding only the read; IncompatibleLockError when the name is used by another kind.
   */
  acquire(resource: string, options: AcquireOptions = {}): Promise<LockHandle> {
    return this.parts.acquirer.acquire(resource, options, false) as Promise<LockHandle>; // never null when not tryOnly
  }

  /**
   * Takes the lock if it is free right now, without waiting; null when someone else holds it.
   * Inside a context that already holds it, succeeds at once.
   */
  tryAcquire(resource: string, options: Omit<AcquireOptions, 'waitTimeoutMs' | 'signal'> = {}): Promise<LockHandle | null> {
    return this.parts.acquirer.acquire(resource, options, true);
  }

  /** A semaphore's lease: up to `permits` holders of `resource` at once (same as `acquire` with permits). */
  semaphore(resource: string, options: Omit<AcquireOptions, 'mode'> & { permits: number }): Promise<LockHandle> {
    return this.acquire(resource, options);
  }

  /**
   * Takes several locks, all or nothing, in one canonical order (sorted by name), so that callers
   * asking for {a, b} and {b, a} cannot deadlock. On any failure the ones taken are released.
   * `waitTimeoutMs` bounds the whole call. Each target may carry its own mode or permits.
   */
  acquireAll(targets: readonly LockTarget[], options: AcquireOptions = {}): Promise<LockHandle[]> {
    return acquireAll(this.parts.acquirer, this.parts.recipes.runtime, targets, options);
  }

  /**
   * Runs `fn` while holding the lock and releases it afterwards, also when `fn` throws.
   * If the lock was lost while `fn` ran and `fn` itself succeeded, rejects with the LockLostError:
   * the work was not exclusive, and the caller must know.
   * Called outside any lock context, it opens one for `fn`: everything `fn` does is reentrant.
   * With `lockContext: 'new'` it opens one even inside a context: the lock is taken as another
   * request would take it, and what `fn` does joins that lock, not the caller's.
   */
  withLock<T>(resource: string, fn: (lock: LockHandle) => T | Promise<T>, options: AcquireOptions = {}): Promise<T> {
    // Outside a request (an event handler, a queue consumer, a script) this call opens the lock
    // context: what `fn` does (withLock again, @DistributedLock methods) joins this lock instead of
    // queueing behind it, while another independent call still opens its own context and waits.
    return this.parts.acquirer.withLock(resource, fn, options);
  }

  /**
   * Runs `fn` in a new lock context, as if another request had started it: the locks `fn` takes
   * (withLock, acquire, decorated methods) are its own, never joined with those of the current
   * request or call, and wait for them like another request's would. For background work a request
   * starts and does not wait for, and for parallel branches (`Promise.all`) that must exclude each
   * other. Inside `fn`, locks are reentrant as in a request. Returns what `fn` returns.
   */
  runInNewContext<T>(fn: () => T): T {
    return runByLockContextPolicy('new', fn);
  }

  /**
   * The lock the current request or decorated call holds on `resource` (its signal and fencing
   * token), or undefined. This is how a handler guarded by @DistributedLock reaches its lock.
   * With several held (a write and its downgraded read), the write comes first. A lock taken with a
   * layout or zkPath is found by its resource label too (or by the same `placement`, when one label
   * names several locks). For an election group: inside a `@Leader` call, the term it runs under;
   * elsewhere, the current term while this instance leads.
   */
  heldLock(resource: string, placement: LockPlacement = {}): HeldLock | undefined {
    return findHeldLock(this.parts.acquirer.reentrantLocks, this.parts.elections, this.parts.recipes.layout, resource, placement);
  }

  /**
   * Asks whoever holds a lock to release it, from any process: a resource (in the module's layout),
   * or `{ zkPath, layout }` for a lock shared with other services. The request is Curator's
   * revocation (`__REVOKE__` written into each holder's node): holders that took the lock with
   * `onReleaseRequest` hear it (their `releaseRequested` signal aborts, or the lock is released at
   * once), and so do Curator holders made revocable. With `forceAfterMs`, the nodes of holders still
   * there after that long are deleted: the lock is taken from them. Resolves with the nodes asked,
   * those that could not be (our plain exclusive and write locks are not revocable: only forced), and
   * those forced.
   */
  requestRelease(
    target: string | { resource?: string; zkPath?: string; layout?: LockLayout },
    options: ReleaseRequestOptions = {},
  ): Promise<ReleaseRequestResult> {
    return rejectOnThrow(() => this.parts.recipes.requestRelease(target, options));
  }

  /**
   * Who holds `resource` and who waits for it, in queue order, with what each stored about itself
   * (host, pid, and the request or job that took it). A snapshot read from ZooKeeper. With
   * `{ zkPath, layout }`, a lock shared with Curator or kazoo services, read by that layout's rules.
   */
  inspect(resource: string, options: InspectOptions = {}): Promise<LockInspection> {
    return this.parts.recipes.inspect(resource, options);
  }

  /**
   * Every lock under rootPath with its holders and waiters (see `inspect`), sorted by resource; then
   * those of `paths` and `scan` (Curator's and kazoo's locks), by path.
   * Read-only: never creates rootPath. For dashboards such as ZkLockViewModule.
   */
  inspectAll(options: InspectAllOptions = {}): Promise<LockOverview> {
    return rejectOnThrow(() => this.parts.recipes.inspectAll(options));
  }

  /**
   * Claims one tick of a scheduled job: resolves `{ claimed: true }` for the first caller of the
   * cluster to claim it, which should then run the job, and `{ claimed: false }` for every later one.
   * The last tick claimed is kept in one ZooKeeper node per job (`<rootPath>/#ticks/<resource>/<job>`),
   * overwritten by each claim. `@DistributedLock` and `@Leader` call it for `@Cron` and `@Interval` methods.
   * @throws InvalidOptionsError for a claim without a job, a schedule, or a tick or period.
   * @internal the decorators' once-per-tick step (nest/once-per-tick.ts), not a user's call
   */
  claimTick(resource: string, claim: TickClaim, options: { signal?: AbortSignal } = {}): Promise<TickClaimResult> {
    return claimTick(this.parts.recipes.runtime, resource, claim, options.signal ?? new AbortController().signal);
  }

  /**
   * Reports a run that was skipped (a `skipped` event and the metric; a log line only when
   * `logEvents` asks for events): what `@DistributedLock` and `@Leader` do when they skip.
   * @internal the decorators' report, not a user's call
   */
  reportSkipped(resource: string, reason: LockSkipReason, kind: LockKindOptions = {}): void {
    const { events, elections } = this.parts;
    events.skipped(resource, kind, currentLockContext()?.owner, reason, reason === 'not-leader' || elections.isElection(resource));
  }

  /** The ZooKeeper connection's state. */
  get connectionState(): ConnectionState | 'connecting' {
    return this.parts.connection.state;
  }

  /** Listens to connection state changes; returns the function that stops listening. */
  onConnectionStateChange(listener: ConnectionStateListener): () => void {
    return this.parts.connection.onStateChange(listener);
  }

  /**
   * Every acquire's course (requested, then acquired, timed-out, aborted or failed; a handle's
   * release; the loss of a lock taken from ZooKeeper) and the connection's state changes. Hot and
   * synchronous, nothing replayed: subscribe before the locks you want to hear about are taken.
   * While no one subscribes, the lock path builds no events at all.
   */
  get events$(): Observable<LockEvent> {
    return this.parts.events.events$;
  }

  /** The session as a health check reports it: connect string, state, id, timeout, locks held. */
  sessionInfo(): LockSessionInfo {
    return sessionInfoOf(this.parts.connection, this.parts.shutdown.heldCount, this.parts.elections.info());
  }
}

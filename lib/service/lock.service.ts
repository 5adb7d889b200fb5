import type { Observable } from 'rxjs';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { InvalidOptionsError, LockLostError, LockTimeoutError, shown } from '../errors.js';
import {
  type AcquireOptions,
  checkRequest,
  lockIdOf,
  type LockContextPolicy,
  type LockPlacement,
  type LockRequest,
  type LockTarget,
  type RequestDefaults,
  validateLockContext,
  validateWaitTimeout,
} from '../context/lock-request.js';
import { type LockLayout, validateLayout } from '../queue/layouts.js';
import { releaseTarget, type ReleaseRequestOptions, type ReleaseRequestResult, requestRelease } from '../recipes/release-request.js';
import { validateZkPath } from '../zookeeper/paths.js';
import { ReentrantLocks, currentLockContext, runByLockContextPolicy, runOutsideLockContext } from '../context/lock-context.js';
import { type LockEventLogLevel, logEventsLevel, logLockEvents } from '../events/lock-event-logger.js';
import { ShutdownGate } from '../context/shutdown-gate.js';
import { leadershipInScope } from '../context/leadership-scope.js';
import { NewLocks } from '../context/new-lock.js';
import { rejectOnThrow } from '../shared/promises.js';
import { LockEvents } from '../events/lock-events.js';
import type { LockEvent, LockSessionInfo, LockSkipReason } from '../events/lock-event-types.js';
import { LockTracing } from '../events/lock-tracing.js';
import { checkTickClaim, claimTick, type TickClaim, type TickClaimResult } from '../recipes/tick-record.js';
import { MinimumHolds } from './minimum-holds.js';
import type { HeldLock, LockHandle } from '../recipes/lock-handle.js';
import type { LockKindOptions } from '../recipes/lock-kind.js';
import type { InspectOptions } from '../recipes/inspect.js';
import type { LockInspection } from '../recipes/lock-inspection.js';
import { type InspectAllOptions, inspectAll, type LockOverview } from '../recipes/inspect-all.js';
import { RecipeSet } from '../recipes/recipe-set.js';
import { type ClientIdentity, ownerAcl } from '../zookeeper/zk-acl.js';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';
import { ZkConnection } from '../zookeeper/zk-connection.js';
import { pickConnectionOptions } from '../zookeeper/zk-connection.options.js';
import { startupError } from '../zookeeper/zk-errors.js';
import { refuseUnknownModuleOptions } from './known-options.js';
import type { ConnectionState, ConnectionStateListener, ZkConnectionLike } from '../zookeeper/zk-connection-like.js';
import type { Election, ElectOptions } from './election.js';
import { ElectionRegistry } from './election-registry.js';

const DEFAULT_SHUTDOWN_GRACE_MS = 5000;
let services = 0;
/** The root paths (with their connect string) already warned about in this process. */
const warnedRootPaths = new Set<string>();
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
  /** This service's locks in the current request's or call's lock context. */
  private readonly reentrantLocks: ReentrantLocks;
  private readonly connection: ZkConnectionLike;
  private readonly ownsConnection: boolean;
  private readonly recipes: RecipeSet;
  /** What a request that does not say gets. */
  private readonly defaults: RequestDefaults;
  /** The locks taken from ZooKeeper, and what shutdown does to them and to the callers waiting. */
  private readonly shutdown: ShutdownGate;
  private readonly rootAclCheck: 'warn' | 'error' | 'off';
  private readonly events: LockEvents;
  /** What to undo at shutdown: listeners on the connection and the event log. */
  private readonly detach: (() => void)[] = [];
  /** Locks released by their callers before their holdAtLeastMs was over. */
  private readonly holds = new MinimumHolds((error) => this.logger.warn(`Releasing a lock after its minimum hold failed: ${String(error)}`));
  /** Whether lock events are logged (a skipped run is logged at debug level when they are not). */
  /** The level lock events are logged at (`logEvents`), or undefined: not logged. */
  private readonly eventLogLevel: LockEventLogLevel | undefined;
  /** The elections this service takes part in. */
  private readonly elections: ElectionRegistry;

  constructor(@Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions) {
    refuseUnknownModuleOptions(options);
    const defaultWaitTimeoutMs = validateWaitTimeout(options.defaultWaitTimeoutMs, 'defaultWaitTimeoutMs');
    const shutdownGraceMs = validateWaitTimeout(options.shutdownGraceMs, 'shutdownGraceMs') ?? DEFAULT_SHUTDOWN_GRACE_MS;
    this.ownsConnection = !options.connection;
    this.shutdown = new ShutdownGate(shutdownGraceMs, !this.ownsConnection, (message) => this.logger.warn(message));
    // ZkConnection checks connectionString itself: required unless a connection is supplied.
    this.connection = options.connection ?? new ZkConnection(pickConnectionOptions(options));
    if (![undefined, 'warn', 'error', 'off'].includes(options.rootAclCheck)) {
      throw new InvalidOptionsError('rootAclCheck', `must be 'warn', 'error' or 'off', got ${shown(options.rootAclCheck)}`);
    }
    this.rootAclCheck = options.rootAclCheck ?? 'warn';
    if (![undefined, true, false].includes(options.tracing)) {
      throw new InvalidOptionsError('tracing', `must be true or false (false: no spans even with @opentelemetry/api installed), got ${shown(options.tracing)}`);
    }
    this.events = new LockEvents(LockTracing.create(options.tracing));
    this.recipes = new RecipeSet(this.connection, {
      rootPath: options.rootPath,
      acl: options.acl ?? ownerAcl(this.identity),
      connectWaitMs: this.connection.connectTimeoutMs,
      tokenEpoch: options.tokenEpoch,
      cohort: options.cohort,
      layout: options.layout,
      onBackgroundError: (error) => this.logger.warn(`Lock clean-up failed and will be left to the session: ${String(error)}`),
    });
    this.defaults = { waitTimeoutMs: defaultWaitTimeoutMs, layout: this.recipes.layout };
    this.elections = new ElectionRegistry(this.recipes.runtime, this.events, this.recipes.layout, shutdownGraceMs, this.logger);
    this.reentrantLocks = new ReentrantLocks(`s${++services}`, new NewLocks(this.recipes, this.shutdown));
    const logLevel = logEventsLevel(options.logEvents);
    this.eventLogLevel = logLevel;
    const logging = logLevel && logLockEvents(this.events.events$, this.logger, logLevel);
    if (logging) this.detach.push(() => logging.unsubscribe());
    const forgetState = this.connection.onStateChange((state, sessionId) => {
      if (state === 'lost') {
        this.logger.warn(
          `ZooKeeper session 0x${sessionId} was lost: every lock held through it is lost (its holder's signal aborted ` +
            'with LockLostError). Opening a new session.',
        );
      }
      this.events.connection(state, sessionId);
    });
    this.detach.push(forgetState);
  }

  /** Who the connection authenticates as, for ACLs. */
  private get identity(): ClientIdentity {
    return { digest: this.connection.digest, saslNames: this.connection.sasl?.names };
  }

  /**
   * Connects to ZooKeeper (start-up fails with ZkConnectionError when it cannot), then checks the
   * ACL of rootPath (see rootAclCheck).
   */
  async onModuleInit(): Promise<void> {
    await this.connection.connect();
    if (this.rootAclCheck === 'off') return;
    const problem = await this.recipes.rootAclProblem(this.identity).catch((error: unknown) => {
      throw startupError(error, this.connection.connectionString, this.recipes.runtime.rootPath);
    });
    if (!problem) return;
    if (this.rootAclCheck === 'error') throw new InvalidOptionsError('rootPath', problem);
    // Without an identity (digest or SASL) nothing can be protected: an open rootPath is what such
    // a setup looks like, not a fault, and a warning at every start would teach users to ignore
    // warnings; it is logged at the logEvents level, as routine events are. With one, the user asked
    // for protection and did not get it: a warning, once per path and process (not at every start
    // of a test's application).
    const message = `${problem} (rootAclCheck: 'off' silences this check).`;
    const key = `${this.connection.connectionString}${this.recipes.runtime.rootPath}`;
    if (this.connection.digest === undefined && this.connection.sasl === undefined) {
      if (this.eventLogLevel) this.logger[this.eventLogLevel](message);
    } else if (!warnedRootPaths.has(key)) {
      warnedRootPaths.add(key);
      this.logger.warn(message);
    }
  }

  /**
   * Shutdown begins: this instance leaves its elections first (a leader's `signal` aborts, its work
   * gets shutdownGraceMs to stop, then the next instance may lead), before the providers whose
   * destroy hooks run after this one tear down what the leader's work uses.
   */
  async onModuleDestroy(): Promise<void> {
    await this.elections.closeAll();
  }

  /**
   * Shutdown goes on (before the HTTP server stops taking requests): refuse new locks, give the
   * holders still running up to shutdownGraceMs to finish, then take what is still held away from
   * them: their signal aborts with a LockLostError saying the application is stopping.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.holds.releaseAll(); // a minimum hold is not a holder still running: it gets no grace
    // (Elections were left at onModuleDestroy; again here for an application that skipped that hook.)
    await Promise.all([this.elections.closeAll(), this.shutdown.begin()]);
  }

  /**
   * Releases anything left and rejects the callers still waiting with LockServiceClosedError, then
   * closes the session unless it was supplied.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.shutdown.finish();
    if (this.ownsConnection) this.connection.close();
    // A supplied connection outlives this service: stop listening to it.
    for (const stop of this.detach.splice(0)) stop();
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
    this.shutdown.assertOpen(group);
    return this.elections.elect(group, { ...options, layout: validateLayout(options.layout) });
  }

  /**
   * Waits for the lock on `resource` and returns its handle. Release it with `handle.release()`.
   * `mode` picks exclusive (default), read, write or simple; `permits` makes it a semaphore.
   * @throws LockTimeoutError after waitTimeoutMs; LockAbortedError when `signal` aborts;
   *   InvalidResourceNameError for a name that cannot be a lock; LockUpgradeError for a write asked
   *   by a context holding only the read; IncompatibleLockError when the name is used by another kind.
   */
  acquire(resource: string, options: AcquireOptions = {}): Promise<LockHandle> {
    return this.acquireByPolicy(resource, options, false) as Promise<LockHandle>; // never null when not tryOnly
  }

  /**
   * Takes the lock if it is free right now, without waiting; null when someone else holds it.
   * Inside a context that already holds it, succeeds at once.
   */
  tryAcquire(resource: string, options: Omit<AcquireOptions, 'waitTimeoutMs' | 'signal'> = {}): Promise<LockHandle | null> {
    return this.acquireByPolicy(resource, options, true);
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
    return rejectOnThrow(() => this.byPolicy(validateLockContext(options.lockContext), (owner) => this.acquireAllIn(targets, options, owner)));
  }

  private async acquireAllIn(targets: readonly LockTarget[], options: AcquireOptions, owner: string | undefined): Promise<LockHandle[]> {
    const requests = this.canonicalOrder(targets, options).map((request) => withOwner(request, owner));
    const waitTimeoutMs = validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? this.defaults.waitTimeoutMs;
    const deadline = waitTimeoutMs === undefined ? undefined : performance.now() + waitTimeoutMs;
    const handles: LockHandle[] = [];
    try {
      for (const request of requests) {
        const left = deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
        handles.push((await this.acquireRequest({ ...request, waitTimeoutMs: left }, false))!);
      }
      return handles;
    } catch (error) {
      await Promise.allSettled(handles.reverse().map((handle) => handle.release()));
      // Each lock waited for what was left of the budget; the caller set the whole of it.
      if (error instanceof LockTimeoutError && waitTimeoutMs !== undefined) throw new LockTimeoutError(error.resource, waitTimeoutMs);
      throw error;
    }
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
    return rejectOnThrow(() => {
      const policy = validateLockContext(options.lockContext);
      // The lock itself joins the context `fn` runs in (the new one, with 'new'), so `fn` joins it.
      return runByLockContextPolicy(policy, () => this.holding(resource, fn, { ...options, lockContext: 'join' }));
    });
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

  private async holding<T>(resource: string, fn: (lock: LockHandle) => T | Promise<T>, options: AcquireOptions): Promise<T> {
    const lock = await this.acquire(resource, options);
    let result: T;
    try {
      result = await fn(lock);
    } finally {
      // Always release, so a reentrant holder is counted out even when the lock was lost meanwhile.
      await lock.release().catch((error: unknown) => {
        if (!(error instanceof LockLostError)) throw error; // the loss is reported below
      });
    }
    if (lock.signal.aborted) throw lock.signal.reason;
    return result;
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
    const layout = validateLayout(placement.layout) ?? this.defaults.layout;
    const zkPath = placement.zkPath === undefined ? undefined : validateZkPath(placement.zkPath);
    const context = currentLockContext();
    return (
      this.reentrantLocks.held(context, lockIdOf(resource, layout, zkPath)) ??
      this.reentrantLocks.heldByLabel(context, resource, zkPath) ??
      leadershipInScope(resource) ??
      this.elections.leadership(resource)
    );
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
    return rejectOnThrow(() => {
      const { resource, zkPath, layout } = releaseTarget(target);
      const { runtime } = this.recipes;
      const label = resource ?? (zkPath as string);
      const path = runtime.pathFor(label, zkPath);
      return requestRelease(runtime, path, validateLayout(layout) ?? this.defaults.layout, options);
    });
  }

  /**
   * Who holds `resource` and who waits for it, in queue order, with what each stored about itself
   * (host, pid, and the request or job that took it). A snapshot read from ZooKeeper. With
   * `{ zkPath, layout }`, a lock shared with Curator or kazoo services, read by that layout's rules.
   */
  inspect(resource: string, options: InspectOptions = {}): Promise<LockInspection> {
    return this.recipes.inspect(resource, options);
  }

  /**
   * Every lock under rootPath with its holders and waiters (see `inspect`), sorted by resource; then
   * those of `paths` and `scan` (Curator's and kazoo's locks), by path.
   * Read-only: never creates rootPath. For dashboards such as ZkLockViewModule.
   */
  async inspectAll(options: InspectAllOptions = {}): Promise<LockOverview> {
    const overview = await inspectAll(this.recipes.runtime, options);
    return { ...overview, locks: overview.locks.map((lock) => this.recipes.withLocalWaiters(lock)) };
  }

  /**
   * Claims one tick of a scheduled job: resolves `{ claimed: true }` for the first caller of the
   * cluster to claim it, which should then run the job, and `{ claimed: false }` for every later one.
   * The last tick claimed is kept in one ZooKeeper node per job (`<rootPath>/#ticks/<resource>/<job>`),
   * overwritten by each claim. `@DistributedLock` calls it for `@Cron` and `@Interval` methods; call
   * it yourself, holding the job's lock, from a scheduled method that calls withLock.
   * @throws InvalidOptionsError for a claim without a job, a schedule, or a tick or period.
   */
  claimTick(resource: string, claim: TickClaim, options: { signal?: AbortSignal } = {}): Promise<TickClaimResult> {
    return rejectOnThrow(() => {
      checkTickClaim(claim);
      this.recipes.runtime.pathOf(resource); // a name that cannot be a lock cannot name a record either
      return claimTick(this.recipes.runtime, resource, claim, options.signal ?? new AbortController().signal);
    });
  }

  /**
   * Reports a run that was skipped (a `skipped` event and the metric; a log line only when
   * `logEvents` asks for events): what `@DistributedLock` does when it skips; for code that skips
   * runs itself.
   */
  reportSkipped(resource: string, reason: LockSkipReason, kind: LockKindOptions = {}): void {
    this.events.skipped(resource, kind, currentLockContext()?.owner, reason, reason === 'not-leader' || this.elections.isElection(resource));
  }

  /** The ZooKeeper connection's state. */
  get connectionState(): ConnectionState | 'connecting' {
    return this.connection.state;
  }

  /** Listens to connection state changes; returns the function that stops listening. */
  onConnectionStateChange(listener: ConnectionStateListener): () => void {
    return this.connection.onStateChange(listener);
  }

  /**
   * Every acquire's course (requested, then acquired, timed-out, aborted or failed; a handle's
   * release; the loss of a lock taken from ZooKeeper) and the connection's state changes. Hot and
   * synchronous, nothing replayed: subscribe before the locks you want to hear about are taken.
   * While no one subscribes, the lock path builds no events at all.
   */
  get events$(): Observable<LockEvent> {
    return this.events.events$;
  }

  /** The session as a health check reports it: connect string, state, id, timeout, locks held. */
  sessionInfo(): LockSessionInfo {
    return {
      connectionString: this.connection.connectionString,
      state: this.connection.state,
      sessionId: this.connection.sessionId,
      sessionTimeoutMs: this.connection.negotiatedSessionTimeoutMs,
      server: this.connection.currentServer,
      members: this.connection.ensemble?.members ?? [],
      addon: this.connection.addon,
      tls: this.connection.tls,
      heldLocks: this.shutdown.heldCount,
      elections: this.elections.info(),
    };
  }

  private acquireByPolicy(resource: string, options: AcquireOptions, tryOnly: boolean): Promise<LockHandle | null> {
    return rejectOnThrow(() => {
      const request = this.requestOf(resource, options, options);
      this.elections.assertNotElection(resource, request.zkPath);
      return this.byPolicy(validateLockContext(options.lockContext), (owner) => this.acquireRequest(withOwner(request, owner), tryOnly));
    });
  }

  /**
   * Runs an acquire by its lock context policy: `'new'` takes the lock outside any context (it is
   * the caller's own, as in a script), its node still naming the context's owner (given to `take`).
   */
  private byPolicy<T>(policy: LockContextPolicy, take: (owner: string | undefined) => Promise<T>): Promise<T> {
    if (policy === 'join') return take(undefined);
    const owner = currentLockContext()?.owner;
    return runOutsideLockContext(() => take(owner));
  }

  private requestOf(resource: string, kind: LockKindOptions & LockPlacement, options: AcquireOptions): LockRequest {
    return checkRequest(resource, kind, options, this.defaults);
  }

  /**
   * The targets checked, each lock once, sorted by their ZooKeeper paths: every process orders the
   * same locks alike, however it names them (a resource, or the zkPath of the same node).
   */
  private canonicalOrder(targets: readonly LockTarget[], options: AcquireOptions): LockRequest[] {
    if (options.zkPath !== undefined) {
      throw new InvalidOptionsError('zkPath', 'acquireAll takes each lock\'s zkPath in its target ({ resource, zkPath }), not in the options of all');
    }
    const byLock = new Map<string, { request: LockRequest; path: string }>();
    for (const target of targets) {
      const { resource, ...kind } = typeof target === 'string' ? { resource: target } : target;
      const request = this.requestOf(
        resource,
        {
          mode: kind.mode ?? options.mode,
          permits: kind.permits ?? options.permits,
          layout: kind.layout ?? options.layout,
          zkPath: kind.zkPath,
        },
        options,
      );
      const seen = byLock.get(request.lockId);
      if (seen && (seen.request.slot !== request.slot || seen.request.kind.permits !== request.kind.permits)) {
        throw new InvalidOptionsError('resources', `"${resource}" is asked for twice, with different modes or permits`);
      }
      this.elections.assertNotElection(resource, request.zkPath);
      byLock.set(request.lockId, { request, path: this.recipes.runtime.pathFor(resource, request.zkPath) });
    }
    return [...byLock.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map(({ request }) => request);
  }

  /**
   * One checked request: the lock context answers, or takes a new lock from ZooKeeper; observed,
   * when events or spans are; held for at least holdAtLeastMs, when asked.
   */
  private acquireRequest(request: LockRequest, tryOnly: boolean): Promise<LockHandle | null> {
    const { holdAtLeastMs } = request;
    const acquired = this.events.watched
      ? this.events.observe(request, tryOnly, request.owner ?? currentLockContext()?.owner, () => this.reentrantLocks.acquire(request, tryOnly))
      : this.reentrantLocks.acquire(request, tryOnly);
    return holdAtLeastMs > 0 ? acquired.then((handle) => handle && this.holds.wrap(handle, holdAtLeastMs)) : acquired;
  }
}

/** The request, its node naming `owner` when the caller named none. */
function withOwner(request: LockRequest, owner: string | undefined): LockRequest {
  return owner === undefined || request.owner !== undefined ? request : { ...request, owner };
}

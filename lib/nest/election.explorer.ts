import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InvalidOptionsError } from '../errors.js';
import { Backoff } from '../shared/backoff.js';
import { MAX_RETRY_DELAY_MS } from '../recipes/candidacy.options.js';
import { runOutsideLockContext } from '../context/lock-context.js';
import type { LeaderHandle } from '../recipes/leader-handle.js';
import type { Election } from '../service/election.js';
import { LockService } from '../service/lock.service.js';
import type { DistributedLockSpec } from './distributed-lock.options.js';
import type { LeaderSpec } from './leader.options.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { adoptSchedule, scheduleOf } from './scheduled-method.js';
import { providerMethods } from './provider-methods.js';
import { checkShutdownHooksSoon } from './shutdown-hooks-check.js';
import { DISTRIBUTED_LOCK_METADATA, LEADER_METADATA, ON_LEADERSHIP_METADATA } from './zk-lock.constants.js';

/** One decorated method of one instance. */
interface Decorated {
  readonly instance: object;
  readonly name: string;
  readonly spec: LeaderSpec;
  readonly onLeadership: boolean;
}

/**
 * At bootstrap, joins the election of every group named by @Leader or @OnLeadership in this
 * application (start-up fails with InvalidOptionsError when two decorators place one group
 * differently, a group is also a @DistributedLock resource, or a decorated provider is
 * request-scoped), waits until each first term is decided (so that a @Leader call right after
 * start-up runs on the instance that leads), and calls each @OnLeadership method with the
 * LeaderHandle at the start of every term. LockService leaves the elections at shutdown.
 */
@Injectable()
export class ElectionExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ZkLock');
  /** The decorated methods found at init, and each group's placement. */
  private decorated: Decorated[] = [];
  private groups = new Map<string, LeaderSpec>();
  /** Failures of @OnLeadership methods, by election: how long a failing leader stays out of line. */
  private readonly failures = new WeakMap<Election, Backoff>();
  private cancelShutdownHooksCheck = (): void => undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly locks: LockService,
  ) {}

  /**
   * Finds the decorated methods, checks them (start-up fails with InvalidOptionsError), and tells
   * the registry which instances are this application's, so that a @Leader call from another
   * provider's init hook uses this application's LockService.
   */
  onModuleInit(): void {
    const lockResources = new Map<string, string>();
    const keys = [LEADER_METADATA, ON_LEADERSHIP_METADATA, DISTRIBUTED_LOCK_METADATA];
    for (const { wrapper, instance, name, method } of providerMethods(this.discovery, this.scanner, keys)) {
      const leader = Reflect.getMetadata(LEADER_METADATA, method) as LeaderSpec | undefined;
      const onLeadership = Reflect.getMetadata(ON_LEADERSHIP_METADATA, method) as LeaderSpec | undefined;
      const lock = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as DistributedLockSpec | undefined;
      if (typeof lock?.resource === 'string') lockResources.set(lock.resource, lock.method);
      // Nest's instance of a request-scoped provider is a stub with nothing injected, and each
      // request's instance is one this explorer never sees.
      const requestScoped = !wrapper.isDependencyTreeStatic();
      if (leader) {
        if (requestScoped) throw requestScopedError('@Leader', leader.method);
        adoptSchedule(leader, scheduleOf(method, leader.method));
        this.decorated.push({ instance, name, spec: leader, onLeadership: false });
      }
      if (onLeadership) {
        if (requestScoped) throw requestScopedError('@OnLeadership', onLeadership.method);
        this.decorated.push({ instance, name, spec: onLeadership, onLeadership: true });
      }
    }
    if (this.decorated.length === 0) return;
    this.groups = checkGroups(this.decorated, lockResources);
    lockServiceRegistry.start(this.locks, this.decorated.map(({ instance }) => instance));
  }

  /**
   * Joins each group's election, calls the @OnLeadership methods at each term from now on, and
   * resolves once every first term is decided (one round trip: create and list).
   */
  async onApplicationBootstrap(): Promise<void> {
    const joined: Election[] = [];
    for (const [group, spec] of this.groups) {
      const election = this.locks.elect(group, { layout: spec.options.layout, zkPath: spec.options.zkPath });
      for (const each of this.decorated.filter((d) => d.onLeadership && d.spec.group === group)) this.callOnLeadership(election, each);
      joined.push(election);
    }
    this.cancelShutdownHooksCheck = checkShutdownHooksSoon(this.logger, () => this.locks.sessionInfo().elections.length > 0);
    await Promise.all(joined.map((election) => election.decided));
  }

  onModuleDestroy(): void {
    this.cancelShutdownHooksCheck();
  }

  /** Calls the method at the start of each term, outside any lock context. */
  private callOnLeadership(election: Election, { instance, name, spec }: Decorated): void {
    election.onChange((change) => {
      const handle = change.leader ? election.current : undefined;
      if (!handle) return;
      let result: unknown;
      try {
        result = runOutsideLockContext(() => (instance as Record<string, (handle: LeaderHandle) => unknown>)[name]!(handle));
      } catch (error) {
        return this.failed(election, spec, handle, error);
      }
      if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
        const running = Promise.resolve(result);
        handle.stopsWith(running);
        running.catch((error: unknown) => this.failed(election, spec, handle, error));
      }
    });
  }

  /**
   * A failing role while leading: log it and resign, so that another instance leads; this one
   * queues again after a pause that doubles with each failure in a row (1 s up to 30 s), so that a
   * role that always fails does not spin.
   */
  private failed(election: Election, spec: LeaderSpec, handle: LeaderHandle, error: unknown): void {
    if (handle.signal.aborted) {
      this.logger.debug?.(`${spec.method} ended with an error after leadership of "${spec.group}" ended: ${String(error)}`);
      return;
    }
    let backoff = this.failures.get(election);
    if (!backoff) this.failures.set(election, (backoff = new Backoff(FIRST_REQUEUE_PAUSE_MS, MAX_RETRY_DELAY_MS, FAILURES_FORGOTTEN_AFTER_MS)));
    const requeueAfterMs = backoff.next();
    this.logger.error(
      `${spec.method} failed while leading "${spec.group}"; resigning so that another instance leads, and queueing again in ` +
        `${requeueAfterMs / 1000} s: ${String(error)}`,
    );
    void election.resign({ requeueAfterMs }).catch(() => undefined);
  }
}

function requestScopedError(decorator: string, method: string): InvalidOptionsError {
  return new InvalidOptionsError(
    decorator,
    `${method} is on a request-scoped provider (or one that depends on one), which has no instance outside a request: ` +
      'put it on a singleton provider (a request-scoped one can inject it and call it)',
  );
}

/** A failure this long after the last one starts the count again. */
const FAILURES_FORGOTTEN_AFTER_MS = 60_000;
/** How long a leader whose role failed once stays out of line (doubling, up to the candidacy's longest retry pause). */
const FIRST_REQUEUE_PAUSE_MS = 1000;

/**
 * One placement per group, and no group that is also a lock.
 * @throws InvalidOptionsError naming both methods
 */
function checkGroups(decorated: readonly Decorated[], lockResources: ReadonlyMap<string, string>): Map<string, LeaderSpec> {
  const groups = new Map<string, LeaderSpec>();
  for (const { spec } of decorated) {
    const lockMethod = lockResources.get(spec.group);
    if (lockMethod) {
      throw new InvalidOptionsError(
        'group',
        `"${spec.group}" is an election group of ${spec.method} and a @DistributedLock resource of ${lockMethod}: a name is either an election or a lock; rename one of them`,
      );
    }
    const first = groups.get(spec.group);
    if (!first) {
      groups.set(spec.group, spec);
    } else if (first.options.layout !== spec.options.layout || first.options.zkPath !== spec.options.zkPath) {
      throw new InvalidOptionsError(
        'group',
        `${first.method} and ${spec.method} place the election "${spec.group}" differently (layout, zkPath): give every decorator of a group the same options`,
      );
    }
  }
  return groups;
}

import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { InvalidOptionsError } from '../errors.js';
import { runOutsideLockContext } from '../context/lock-context.js';
import type { LeaderHandle } from '../recipes/leader-handle.js';
import type { Election } from '../service/election.js';
import { LockService } from '../service/lock.service.js';
import type { DistributedLockSpec } from './distributed-lock.options.js';
import type { LeaderSpec } from './leader.options.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { adoptLeaderSchedule } from './leader.decorator.js';
import { scheduleOf } from './scheduled-method.js';
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
 * differently, or a group is also a @DistributedLock resource), and calls each @OnLeadership
 * method with the LeaderHandle at the start of every term. LockService leaves the elections at
 * shutdown.
 */
@Injectable()
export class ElectionExplorer implements OnApplicationBootstrap {
  private readonly logger = new Logger('ZkLock');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly locks: LockService,
  ) {}

  onApplicationBootstrap(): void {
    const decorated: Decorated[] = [];
    const lockResources = new Map<string, string>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as unknown;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[name] as object;
        const leader = Reflect.getMetadata(LEADER_METADATA, method) as LeaderSpec | undefined;
        const onLeadership = Reflect.getMetadata(ON_LEADERSHIP_METADATA, method) as LeaderSpec | undefined;
        const lock = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as DistributedLockSpec | undefined;
        if (typeof lock?.resource === 'string') lockResources.set(lock.resource, lock.method);
        if (leader) {
          adoptLeaderSchedule(leader, scheduleOf(method, leader.method));
          decorated.push({ instance, name, spec: leader, onLeadership: false });
        }
        if (onLeadership) decorated.push({ instance, name, spec: onLeadership, onLeadership: true });
      }
    }
    if (decorated.length === 0) return;
    const groups = checkGroups(decorated, lockResources);
    lockServiceRegistry.start(this.locks, decorated.map(({ instance }) => instance));
    for (const [group, spec] of groups) {
      const election = this.locks.elect(group, { layout: spec.options.layout, zkPath: spec.options.zkPath });
      for (const each of decorated.filter((d) => d.onLeadership && d.spec.group === group)) this.callOnLeadership(election, each);
    }
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

  /** A failing role while leading: log it and resign, so that another instance leads. */
  private failed(election: Election, spec: LeaderSpec, handle: LeaderHandle, error: unknown): void {
    if (handle.signal.aborted) {
      this.logger.debug?.(`${spec.method} ended with an error after leadership of "${spec.group}" ended: ${String(error)}`);
      return;
    }
    this.logger.error(`${spec.method} failed while leading "${spec.group}"; resigning so that another instance leads: ${String(error)}`);
    void election.resign().catch(() => undefined);
  }
}

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

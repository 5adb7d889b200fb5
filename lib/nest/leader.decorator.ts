import { InvalidOptionsError, LockServiceClosedError } from '../errors.js';
import type { LeaderHandle } from '../recipes/leader-handle.js';
import type { LockService } from '../service/lock.service.js';
import { runAsLeader } from '../context/leadership-scope.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { type LeaderMethodOptions, type LeaderSpec, validateLeaderOptions } from './leader.options.js';
import { wrapMethod } from './wrap-method.js';
import type { MethodSchedule } from './scheduled-method.js';
import { LEADER_METADATA } from './zk-lock.constants.js';

/**
 * Runs the method only on the current leader of `group`: elsewhere the call is skipped and returns
 * undefined (a `skipped` event, reason `not-leader`; logged only with `logEvents`). Stacked with `@Cron` or
 * `@Interval`, a schedule that runs on the leader only (with `oncePerTick`, also never twice for one
 * tick across a handover). Inside the method, `heldLock(group)` is the leadership (its `signal`,
 * `fencingToken`, `assertHeld`). The group is joined at start-up and left at shutdown; a leader
 * that gives up (shutdown, resign) lets a run in progress finish first, up to shutdownGraceMs.
 */
export function Leader(group: string, options: LeaderMethodOptions = {}): MethodDecorator {
  validateLeaderOptions('@Leader', group, options);
  return (target, key, descriptor: PropertyDescriptor) => {
    const spec: LeaderSpec = { group, options, method: `${target.constructor.name}.${String(key)}` };
    const wrapped = wrapMethod('@Leader', key, descriptor, (original) =>
      function (this: object, ...args: unknown[]): unknown {
        const service = lockServiceRegistry.serviceFor(this, spec.method, '@Leader');
        const term = currentTerm(service, spec);
        if (!term) {
          service.reportSkipped(group, 'not-leader');
          return undefined;
        }
        const schedule = tickSchedules.get(spec);
        const call = () => runAsLeader(group, term, () => runHolding(term, () => original.apply(this, args)));
        return schedule ? runOncePerTick(service, spec, term, schedule, call) : call();
      },
    );
    Reflect.defineMetadata(LEADER_METADATA, spec, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
}

/** The schedules of @Leader methods with oncePerTick, found at start-up. */
const tickSchedules = new WeakMap<LeaderSpec, MethodSchedule>();

/**
 * Remembers a @Leader method's schedule when it claims ticks (ElectionExplorer, at start-up).
 * @throws InvalidOptionsError for oncePerTick on a method without @Cron or @Interval.
 */
export function adoptLeaderSchedule(spec: LeaderSpec, schedule: MethodSchedule | undefined): void {
  if (spec.options.oncePerTick !== true) return;
  if (!schedule) {
    throw new InvalidOptionsError(
      '@Leader oncePerTick',
      `${spec.method} has no @Cron with a cron expression and no @Interval (from @nestjs/schedule), so it has no ticks: remove oncePerTick, or schedule the method`,
    );
  }
  tickSchedules.set(spec, schedule);
}

/** This instance's term of the group, when it leads now; undefined otherwise (and while the application stops). */
function currentTerm(service: LockService, spec: LeaderSpec): LeaderHandle | undefined {
  try {
    const term = service.elect(spec.group, { layout: spec.options.layout, zkPath: spec.options.zkPath }).current;
    return term?.isHeld() ? term : undefined;
  } catch (error) {
    if (error instanceof LockServiceClosedError) return undefined;
    throw error;
  }
}

/** Runs the call; a voluntary end of the term (shutdown, resign) waits for a promise it returns. */
function runHolding(term: LeaderHandle, call: () => unknown): unknown {
  const result = call();
  if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') term.stopsWith(Promise.resolve(result));
  return result;
}

/**
 * Claims the tick (named when the call starts), then runs; a tick already run is skipped, and so is
 * one whose term ended during the claim (not leading is a skip, not an error of the schedule).
 */
async function runOncePerTick(service: LockService, spec: LeaderSpec, term: LeaderHandle, schedule: MethodSchedule, call: () => unknown): Promise<unknown> {
  const tick = schedule.tick();
  let claimed: boolean;
  try {
    ({ claimed } = await service.claimTick(spec.group, { job: spec.method, ...tick }, { signal: term.signal }));
  } catch (error) {
    if (!term.signal.aborted) throw error;
    claimed = false;
  }
  if (!term.isHeld()) {
    service.reportSkipped(spec.group, 'not-leader');
    return undefined;
  }
  if (!claimed) {
    service.reportSkipped(spec.group, 'ran-this-tick');
    return undefined;
  }
  return call();
}

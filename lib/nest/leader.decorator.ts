import { LockServiceClosedError } from '../errors.js';
import type { LeaderHandle } from '../recipes/leader-handle.js';
import type { LockService } from '../service/lock.service.js';
import { runAsLeader } from '../context/leadership-scope.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { type LeaderMethodOptions, type LeaderSpec, validateLeaderOptions } from './leader.options.js';
import { wrapMethod } from './wrap-method.js';
import { type MethodSchedule, tickScheduleOf } from './scheduled-method.js';
import { claimTickHolding } from './once-per-tick.js';
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
        const schedule = tickScheduleOf(spec);
        const call = () => runAsLeader(group, term, () => runHolding(term, () => original.apply(this, args)));
        return schedule ? runOncePerTick(service, spec, term, schedule, call) : call();
      },
    );
    Reflect.defineMetadata(LEADER_METADATA, spec, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
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
  const outcome = await claimTickHolding(service, spec.group, spec.method, schedule.tick(), term);
  if (outcome === 'lost' || !term.isHeld()) {
    service.reportSkipped(spec.group, 'not-leader');
    return undefined;
  }
  if (outcome === 'ran-this-tick') {
    service.reportSkipped(spec.group, 'ran-this-tick');
    return undefined;
  }
  return call();
}

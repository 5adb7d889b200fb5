/**
 * The schedule of a @DistributedLock or @Leader method, read at start-up from the metadata @nestjs/schedule's
 * decorators write (by their string keys: nothing is imported from that package), and the tick a
 * call runs for. `cron` (@nestjs/schedule's own dependency, the version that fires the job) is
 * loaded only when a decorated method has a @Cron.
 */
import { createRequire } from 'node:module';
import { InvalidOptionsError } from '../errors.js';
import type { TickClaim } from '../recipes/tick-record.js';
import { resolveHere } from '../shared/package-require.js';
import type { DistributedLockSpec } from './distributed-lock.options.js';
import type { LeaderSpec } from './leader.options.js';

/** @nestjs/schedule's metadata keys and SchedulerType values (schedule.constants.ts, scheduler-type.enum.ts). */
const SCHEDULER_TYPE = 'SCHEDULER_TYPE';
const SCHEDULE_CRON_OPTIONS = 'SCHEDULE_CRON_OPTIONS';
const SCHEDULE_INTERVAL_OPTIONS = 'SCHEDULE_INTERVAL_OPTIONS';
const CRON = 1;
const INTERVAL = 3;

/** How many fire times of a cron expression are looked at for its shortest period. */
const CRON_DATES_SAMPLED = 32;

/** What a method's ticks are. */
export interface MethodSchedule {
  /** The decorator, for messages. */
  readonly decorator: '@Cron' | '@Interval';
  /** The shortest time between two ticks, in ms. */
  readonly periodMs: number;
  /** The schedule part of the claim of a call made now. */
  tick(): Omit<TickClaim, 'job'>;
}

/** The parts of cron's CronTime used here. */
interface CronTimeLike {
  sendAt(): { toMillis(): number };
  sendAt(count: number): { toMillis(): number }[];
}
type CronTimeClass = new (source: string, timeZone?: string | null, utcOffset?: number | string | null) => CronTimeLike;

let cronTimeClass: CronTimeClass | undefined;

/** @throws InvalidOptionsError when `cron` cannot be loaded from where @nestjs/schedule is. */
function loadCronTime(method: string): CronTimeClass {
  if (cronTimeClass) return cronTimeClass;
  try {
    // From @nestjs/schedule's own place: the `cron` it fires jobs with, however the app's packages are laid out.
    const schedule = resolveHere().require.resolve('@nestjs/schedule');
    cronTimeClass = (createRequire(schedule)('cron') as { CronTime: CronTimeClass }).CronTime;
    return cronTimeClass;
  } catch (error) {
    throw new InvalidOptionsError(
      '@DistributedLock oncePerTick',
      `${method} has a @Cron, and its fire times are computed with the \`cron\` package @nestjs/schedule depends on, which ` +
        `could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)}): install @nestjs/schedule where ` +
        'nestjs-zk-lock can resolve it, or give the method oncePerTick: false',
    );
  }
}

/**
 * The ticks of a method scheduled with `@Cron(expression)` or `@Interval(ms)`; undefined for any
 * other (a @Timeout runs once per instance, a @Cron of a Date once).
 */
export function scheduleOf(method: object, name = 'the method'): MethodSchedule | undefined {
  const type: unknown = Reflect.getMetadata(SCHEDULER_TYPE, method);
  if (type === CRON) {
    const options = Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, method) as { cronTime?: unknown; timeZone?: string; utcOffset?: number | string } | undefined;
    if (typeof options?.cronTime !== 'string') return undefined;
    return cronSchedule(loadCronTime(name), options.cronTime, options.timeZone, options.utcOffset);
  }
  if (type === INTERVAL) {
    const periodMs = (Reflect.getMetadata(SCHEDULE_INTERVAL_OPTIONS, method) as { timeout?: unknown } | undefined)?.timeout;
    if (typeof periodMs !== 'number' || !(periodMs > 0)) return undefined;
    const schedule = `interval ${periodMs}`;
    // Interval timers are not aligned across instances: the period is measured on ZooKeeper's clock.
    return { decorator: '@Interval', periodMs, tick: () => ({ schedule, periodMs, firedAt: performance.now() }) };
  }
  return undefined;
}

function cronSchedule(CronTime: CronTimeClass, expression: string, timeZone: string | undefined, utcOffset: number | string | undefined): MethodSchedule {
  const cronTime = new CronTime(expression, timeZone, utcOffset);
  const dates = cronTime.sendAt(CRON_DATES_SAMPLED).map((date) => date.toMillis());
  let periodMs = Infinity;
  for (let i = 1; i < dates.length; i += 1) periodMs = Math.min(periodMs, dates[i]! - dates[i - 1]!);
  const schedule = ['cron', expression, timeZone, utcOffset].filter((part) => part !== undefined).join(' ');
  // The fire time that follows now: at each firing cron has already passed the tick's own fire time
  // (it never fires early), so every instance whose clock is less than a period off names the same one.
  return { decorator: '@Cron', periodMs, tick: () => ({ schedule, tick: cronTime.sendAt().toMillis() }) };
}

/** The longest minimum hold of a scheduled method, as a share of its period. */
const MAX_HOLD_SHARE = 0.9;

/** The one schedule table: the ticks each @DistributedLock or @Leader method claims, found at start-up. */
const schedules = new WeakMap<DistributedLockSpec | LeaderSpec, MethodSchedule>();

/**
 * Checks a decorated method's tick options against its schedule, and remembers the schedule when
 * its calls claim ticks: @DistributedLock's by default (not with oncePerTick: false), @Leader's with
 * oncePerTick: true.
 * @throws InvalidOptionsError for oncePerTick on a method without ticks, or a minimum hold above nine tenths of the period.
 */
export function adoptSchedule(spec: DistributedLockSpec | LeaderSpec, schedule: MethodSchedule | undefined): void {
  const decorator = 'group' in spec ? '@Leader' : '@DistributedLock';
  const { oncePerTick } = spec.options;
  if (!schedule) {
    if (oncePerTick === true) {
      throw new InvalidOptionsError(
        `${decorator} oncePerTick`,
        `${spec.method} has no @Cron with a cron expression and no @Interval (from @nestjs/schedule), so it has no ticks: ` +
          'remove oncePerTick, or schedule the method',
      );
    }
    return;
  }
  const holdAtLeastMs = 'holdAtLeastMs' in spec.options ? spec.options.holdAtLeastMs : undefined;
  // The hold runs from the grant, which comes some time after the tick fired: a hold close to the
  // period would still be on when the next tick fires, which would then be skipped as busy.
  const longestHold = Math.floor(schedule.periodMs * MAX_HOLD_SHARE);
  if (holdAtLeastMs !== undefined && holdAtLeastMs > longestHold) {
    throw new InvalidOptionsError(
      '@DistributedLock holdAtLeastMs',
      `${spec.method} runs every ${schedule.periodMs} ms (${schedule.decorator}), and a hold of ${holdAtLeastMs} ms, counted from the ` +
        `grant that follows a tick, would keep the lock busy when the next tick fires: give holdAtLeastMs at most ${longestHold} ms ` +
        '(nine tenths of the period), or leave it out (oncePerTick already runs each tick once)',
    );
  }
  const claimsTicks = decorator === '@Leader' ? oncePerTick === true : oncePerTick !== false;
  if (claimsTicks) schedules.set(spec, schedule);
}

/** The schedule whose ticks a call of this method claims, or undefined (none, or it does not claim them). */
export function tickScheduleOf(spec: DistributedLockSpec | LeaderSpec): MethodSchedule | undefined {
  return schedules.get(spec);
}

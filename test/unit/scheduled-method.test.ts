/**
 * How a @DistributedLock method's ticks are read from @nestjs/schedule's metadata, named, and checked
 * at start-up; the pure parts of the tick record. The claims themselves run against a real server in
 * test/integration/tick-claims.test.ts and across processes in test/e2e/scheduled-ticks.e2e.test.ts.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DistributedLock, InvalidOptionsError } from '../../lib/index.js';
import { ZkLockTestingModule } from '../../lib/testing/index.js';
import { DISTRIBUTED_LOCK_METADATA } from '../../lib/nest/zk-lock.constants.js';
import type { DistributedLockSpec } from '../../lib/nest/distributed-lock.options.js';
import { adoptSchedule, scheduleOf, tickScheduleOf } from '../../lib/nest/scheduled-method.js';
import { intervalSlackMs, isDue } from '../../lib/recipes/tick-record.js';

class Jobs {
  @Cron('*/5 * * * * *')
  @DistributedLock('every-5s', { onBusy: 'skip' })
  everyFive(): void {}

  @DistributedLock('daily', { onBusy: 'skip' })
  @Cron('0 30 2 * * *', { timeZone: 'Asia/Tokyo' })
  daily(): void {}

  @Interval(2500)
  @DistributedLock('interval', { onBusy: 'skip', oncePerTick: false })
  interval(): void {}

  @Timeout(100)
  @DistributedLock('once')
  once(): void {}

  @Cron(new Date(Date.UTC(2030, 0, 1)))
  @DistributedLock('on-a-date')
  onADate(): void {}
}

const specOf = (method: object): DistributedLockSpec => Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as DistributedLockSpec;

describe('the ticks of a scheduled method', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('names a cron tick by the fire time that follows now, whichever side of the decorator @Cron is on', () => {
    const schedule = scheduleOf(Jobs.prototype.everyFive)!;
    expect(schedule).toMatchObject({ decorator: '@Cron', periodMs: 5000 });
    vi.useFakeTimers({ toFake: ['Date'] });
    // Cron fires at :05.000 or a little later; an instance whose clock says :05.000 to :09.999 names :10.
    for (const at of ['05.000', '07.300', '09.999']) {
      vi.setSystemTime(new Date(`2026-01-01T00:00:${at}Z`));
      expect(schedule.tick()).toEqual({ schedule: 'cron */5 * * * * *', tick: Date.UTC(2026, 0, 1, 0, 0, 10) });
    }
    expect(scheduleOf(Jobs.prototype.daily)).toMatchObject({ decorator: '@Cron', periodMs: 86_400_000 });
    expect(scheduleOf(Jobs.prototype.daily)!.tick()).toMatchObject({ schedule: 'cron 0 30 2 * * * Asia/Tokyo' });
  });

  it('measures an interval on ZooKeeper\'s clock: the claim carries the period, not a time', () => {
    const schedule = scheduleOf(Jobs.prototype.interval)!;
    expect(schedule.periodMs).toBe(2500);
    expect(schedule.tick()).toEqual({ schedule: 'interval 2500', periodMs: 2500, firedAt: expect.any(Number) });
  });

  it('finds no ticks in a @Timeout, a @Cron of a Date, or an unscheduled method', () => {
    expect(scheduleOf(Jobs.prototype.once)).toBeUndefined();
    expect(scheduleOf(Jobs.prototype.onADate)).toBeUndefined();
    expect(scheduleOf(() => undefined)).toBeUndefined();
  });

  it('claims ticks by default and not with oncePerTick: false', () => {
    const everyFive = specOf(Jobs.prototype.everyFive);
    adoptSchedule(everyFive, scheduleOf(Jobs.prototype.everyFive));
    expect(tickScheduleOf(everyFive)).toBeDefined();
    const interval = specOf(Jobs.prototype.interval);
    adoptSchedule(interval, scheduleOf(Jobs.prototype.interval));
    expect(tickScheduleOf(interval)).toBeUndefined();
  });

  it('counts a cron tick as due when it is later than the record, or the schedule changed', () => {
    expect(isDue(undefined, 's', 1)).toBe(true);
    expect(isDue({ schedule: 's', tick: 5 }, 's', 6)).toBe(true);
    expect(isDue({ schedule: 's', tick: 5 }, 's', 5)).toBe(false);
    expect(isDue({ schedule: 's', tick: 5 }, 's', 4)).toBe(false);
    expect(isDue({ schedule: 'other', tick: 5 }, 's', 4)).toBe(true);
  });

  it('counts an interval as due a period after the last run, less a tenth of it (at most 1 s)', () => {
    expect(intervalSlackMs(1000)).toBe(100);
    expect(intervalSlackMs(60_000)).toBe(1000);
    const last = { schedule: 'interval 1000', tick: 50_000 };
    expect(isDue(last, 'interval 1000', 50_899, 1000)).toBe(false);
    expect(isDue(last, 'interval 1000', 50_900, 1000)).toBe(true);
    expect(isDue(last, 'interval 1000', 49_000, 1000)).toBe(false); // a clock that went back
  });

  it('refuses a negative holdAtLeastMs, a oncePerTick that is not a boolean and an unknown option where the decorator is applied', () => {
    expect(() => DistributedLock('x', { holdAtLeastMs: -1 })).toThrow(/holdAtLeastMs.*-1/);
    expect(() => DistributedLock('x', { oncePerTick: 'yes' as unknown as boolean })).toThrow(/oncePerTick/);
    // ShedLock's name for holdAtLeastMs does nothing here: it is refused, not ignored.
    expect(() => DistributedLock('x', { onBusy: 'skip', lockAtLeastFor: 600 } as never)).toThrow(/lockAtLeastFor is not an option; the options are .*holdAtLeastMs/);
  });
});

describe('start-up checks of tick options', () => {
  async function start(job: new () => object): Promise<unknown> {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), ZkLockTestingModule.forRoot({ logEvents: false })],
      providers: [job],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
      return undefined;
    } catch (error) {
      return error;
    } finally {
      await app.close();
    }
  }

  it('refuses oncePerTick on a method without @Cron or @Interval, saying what to change', async () => {
    @Injectable()
    class Unscheduled {
      @DistributedLock('u', { oncePerTick: true })
      run(): void {}
    }
    const error = await start(Unscheduled);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(String(error)).toMatch(/Unscheduled\.run has no @Cron .* remove oncePerTick, or schedule the method/);
  });

  it('refuses oncePerTick on a @Timeout method', async () => {
    @Injectable()
    class Once {
      @Timeout(60_000)
      @DistributedLock('t', { oncePerTick: true })
      run(): void {}
    }
    expect(await start(Once)).toBeInstanceOf(InvalidOptionsError);
  });

  it('refuses a holdAtLeastMs above nine tenths of the period, for @Cron and @Interval', async () => {
    @Injectable()
    class LongHoldCron {
      @Cron('*/2 * * * * *')
      @DistributedLock('c', { onBusy: 'skip', holdAtLeastMs: 1801 })
      run(): void {}
    }
    @Injectable()
    class LongHoldInterval {
      @Interval(1000)
      @DistributedLock('i', { onBusy: 'skip', holdAtLeastMs: 1500 })
      run(): void {}
    }
    const cron = await start(LongHoldCron);
    expect(cron).toBeInstanceOf(InvalidOptionsError);
    expect(String(cron)).toMatch(/LongHoldCron\.run runs every 2000 ms \(@Cron\).*give holdAtLeastMs at most 1800 ms \(nine tenths of the period\)/);
    expect(String(await start(LongHoldInterval))).toMatch(/runs every 1000 ms \(@Interval\)/);
  });

  it('starts with a hold of nine tenths of the period (the control: the same app otherwise)', async () => {
    @Injectable()
    class ShortHold {
      @Cron('*/2 * * * * *')
      @DistributedLock('c', { onBusy: 'skip', holdAtLeastMs: 1800 })
      run(): void {}
    }
    expect(await start(ShortHold)).toBeUndefined();
  });
});

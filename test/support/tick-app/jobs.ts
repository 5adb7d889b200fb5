import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { DistributedLock } from '../../../lib/index.js';

/**
 * The scheduled jobs of the tick app, each on its own lock: every second by @Cron and by @Interval,
 * with the defaults, with holdAtLeastMs, and without oncePerTick (the controls); and a slow one.
 * Each run prints `ran <job> <instance> <real ms>` (the real clock: performance's, which the shifted
 * Date of the preload does not move).
 */
function ran(job: string): void {
  process.stdout.write(`ran ${job} ${process.env.INSTANCE} ${Math.round(performance.timeOrigin + performance.now())}\n`);
}

const EVERY_SECOND = '* * * * * *';

@Injectable()
export class CronJobs {
  @Cron(EVERY_SECOND)
  @DistributedLock('cron', { onBusy: 'skip' })
  plain(): void {
    ran('cron');
  }

  @Cron(EVERY_SECOND)
  @DistributedLock('cron-hold', { onBusy: 'skip', holdAtLeastMs: 400 })
  held(): void {
    ran('cron-hold');
  }

  @Cron(EVERY_SECOND)
  @DistributedLock('cron-control', { onBusy: 'skip', oncePerTick: false })
  control(): void {
    ran('cron-control');
  }
}

@Injectable()
export class IntervalJobs {
  @Interval(1000)
  @DistributedLock('interval', { onBusy: 'skip' })
  plain(): void {
    ran('interval');
  }

  @Interval(1000)
  @DistributedLock('interval-hold', { onBusy: 'skip', holdAtLeastMs: 400 })
  held(): void {
    ran('interval-hold');
  }

  @Interval(1000)
  @DistributedLock('interval-control', { onBusy: 'skip', oncePerTick: false })
  control(): void {
    ran('interval-control');
  }
}

/** Runs for SLOW_JOB_MS of real time after it prints, so that a test can kill its holder mid-run. */
@Injectable()
export class SlowJob {
  @Cron(EVERY_SECOND)
  @DistributedLock('slow', { onBusy: 'skip' })
  async run(): Promise<void> {
    ran('slow');
    await sleep(Number(process.env.SLOW_JOB_MS ?? '600'));
  }
}

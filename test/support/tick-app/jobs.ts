import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { DistributedLock, Leader, type LeaderHandle, LockService, OnLeadership } from '../../../lib/index.js';

/**
 * When this call's lock was asked for (the `requested` event's timestamp: this process's shifted
 * clock, read when the scheduler called the method). main.ts enters it from the event, which is
 * emitted inside the call: a run's own call, not the job's latest one (a later tick's call can
 * come while an earlier one still waits for ZooKeeper). The library keeps a call's async context
 * through its waits (test/integration/native-async-context.test.ts).
 */
export const calledAt = new AsyncLocalStorage<number>();

/**
 * The scheduled jobs of the tick app, each on its own lock named after the job: every second by
 * @Cron and by @Interval, with the defaults, with holdAtLeastMs, and without oncePerTick (the
 * controls); and a slow one. Each run prints `ran <job> <instance> <real ms> <called ms>`: the real
 * clock (performance's, which the shifted Date of the preload does not move), and this instance's
 * clock when the scheduler called the method (which names the cron tick it ran for).
 */
function ran(job: string): void {
  print('ran', job, calledAt.getStore() ?? '');
}

/**
 * Prints `<word> <job> <instance> <real ms> <value>`, the real clock being performance's (which the
 * shifted Date of the preload does not move): comparable across the instances of one machine.
 */
function print(word: string, job: string, value: string | number): void {
  const real = Math.round(performance.timeOrigin + performance.now());
  process.stdout.write(`${word} ${job} ${process.env.INSTANCE} ${real} ${value}\n`);
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

/**
 * A schedule that runs on the leader of `leader-jobs` only (JOBS=leader): every 300 ms on each
 * instance, the run goes ahead on the leader and prints `ran leader-jobs <instance> <real ms>
 * <fencing token of the leadership>`; elsewhere @Leader skips it (main.ts prints `skipped leader-jobs
 * not-leader`). Each term prints `elected leader-jobs <instance> <real ms> <token>` when it starts and
 * `revoked …` with the same token when its handle's signal aborts (not when the process is killed).
 */
@Injectable()
export class LeaderJobs {
  constructor(private readonly locks: LockService) {}

  @Interval(300)
  @Leader('leader-jobs')
  tick(): void {
    print('ran', 'leader-jobs', this.locks.heldLock('leader-jobs')?.fencingToken ?? '');
  }

  /** The leader's role: running until the term ends (so that a handover waits for it to stop). */
  @OnLeadership('leader-jobs')
  lead(handle: LeaderHandle): Promise<void> {
    print('elected', 'leader-jobs', handle.fencingToken);
    return new Promise((stopped) => {
      handle.signal.addEventListener(
        'abort',
        () => {
          print('revoked', 'leader-jobs', handle.fencingToken);
          stopped();
        },
        { once: true },
      );
    });
  }
}

/**
 * The tick app: one instance of a Nest app whose scheduled jobs are guarded by @DistributedLock or
 * @Leader, run as a process by test/e2e/scheduled-ticks.e2e.test.ts and
 * test/e2e/leader-schedule.e2e.test.ts through test/support/tick-app-process.ts (several at once,
 * each with its own CLOCK_OFFSET_MS through the shifted-clock preload). Configured from the
 * environment: ZK_CONNECT, ROOT_PATH, SESSION_TIMEOUT_MS, LEASE_MARGIN_MS (optional), INSTANCE, JOBS
 * (`ticks`: the cron and interval jobs; `slow`: the slow one; `leader`: the leader-only schedule).
 * Prints `ready <INSTANCE>` once its jobs are scheduled, `skipped <resource> <reason> <INSTANCE>
 * <called ms>` for each skipped run (its own clock when the scheduler called the method), and `stall <INSTANCE> <real ms> <ms>` for each time its event loop was held up for
 * STALL_MS or more (the real clock when the stall began, performance's, and how long it lasted): a
 * run that did not happen at its time can then be told apart from one the machine held up.
 */
import 'reflect-metadata';
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LockService, ZkLockModule } from '../../../lib/index.js';
import { calledAt, CronJobs, IntervalJobs, LeaderJobs, SlowJob } from './jobs.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

function providers(jobs: string): Type[] {
  if (jobs === 'slow') return [SlowJob];
  if (jobs === 'leader') return [LeaderJobs];
  return [CronJobs, IntervalJobs];
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    ZkLockModule.forRoot({
      connectionString: env('ZK_CONNECT'),
      rootPath: env('ROOT_PATH'),
      sessionTimeoutMs: Number(env('SESSION_TIMEOUT_MS')),
      ...(process.env.LEASE_MARGIN_MS === undefined ? {} : { leaseMarginMs: Number(process.env.LEASE_MARGIN_MS) }),
      rootAclCheck: 'off',
    }),
  ],
  providers: providers(env('JOBS')),
})
class TickAppModule {}

const app = await NestFactory.createApplicationContext(TickAppModule, { logger: ['error', 'warn'], abortOnError: false });
app.enableShutdownHooks();
await app.init();
app.get(LockService).events$.subscribe((event) => {
  if (event.type === 'requested') calledAt.enterWith(event.timestamp); // inside the call: see jobs.ts
  if (event.type === 'skipped') process.stdout.write(`skipped ${event.resource} ${event.reason} ${env('INSTANCE')} ${calledAt.getStore() ?? ''}\n`);
});
console.log(`ready ${env('INSTANCE')}`);

/** A gap of this many ms between two turns of a 20 ms timer is a stall worth printing. */
const STALL_MS = 150;
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  const gap = now - last - 20;
  if (gap >= STALL_MS) process.stdout.write(`stall ${env('INSTANCE')} ${Math.round(performance.timeOrigin + last)} ${Math.round(gap)}\n`);
  last = now;
}, 20).unref();

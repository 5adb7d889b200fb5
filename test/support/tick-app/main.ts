/**
 * The tick app: one instance of a Nest app whose scheduled jobs are guarded by @DistributedLock or
 * @Leader, run as a process by test/e2e/scheduled-ticks.e2e.test.ts and
 * test/e2e/leader-schedule.e2e.test.ts through test/support/tick-app-process.ts (several at once,
 * each with its own CLOCK_OFFSET_MS through the shifted-clock preload). Configured from the
 * environment: ZK_CONNECT, ROOT_PATH, SESSION_TIMEOUT_MS, LEASE_MARGIN_MS (optional), INSTANCE, JOBS
 * (`ticks`: the cron and interval jobs; `slow`: the slow one; `leader`: the leader-only schedule).
 * Prints `ready <INSTANCE>` once its jobs are scheduled, and `skipped <resource> <reason>` for each
 * skipped run.
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
  if (event.type === 'requested') calledAt.set(event.resource, event.timestamp);
  if (event.type === 'skipped') process.stdout.write(`skipped ${event.resource} ${event.reason}\n`);
});
console.log(`ready ${env('INSTANCE')}`);

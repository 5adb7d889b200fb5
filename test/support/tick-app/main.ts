/**
 * The tick app: one instance of a Nest app whose scheduled jobs are guarded by @DistributedLock,
 * run as a process by test/e2e/scheduled-ticks.e2e.test.ts (several at once, each with its own
 * CLOCK_OFFSET_MS through the shifted-clock preload). Configured from the environment: ZK_CONNECT,
 * ROOT_PATH, SESSION_TIMEOUT_MS, INSTANCE, JOBS (`ticks`: the cron and interval jobs; `slow`: the slow one). Prints
 * `ready <INSTANCE>` once its jobs are scheduled, and `skipped <resource> <reason>` for each skipped run.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LockService, ZkLockModule } from '../../../lib/index.js';
import { calledAt, CronJobs, IntervalJobs, SlowJob } from './jobs.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

@Module({
  imports: [
    ScheduleModule.forRoot(),
    ZkLockModule.forRoot({ connectionString: env('ZK_CONNECT'), rootPath: env('ROOT_PATH'), sessionTimeoutMs: Number(env('SESSION_TIMEOUT_MS')), rootAclCheck: 'off' }),
  ],
  providers: env('JOBS') === 'slow' ? [SlowJob] : [CronJobs, IntervalJobs],
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

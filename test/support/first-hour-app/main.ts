/**
 * The first-hour app: a Nest app as a new user writes it (Nest's default logger, the library's
 * default options but those below), run as processes by test/e2e/first-hour.e2e.test.ts.
 * A guarded one-second @Cron, and a leader role (@OnLeadership, @Leader). Configured from the
 * environment: ZK_CONNECT, ROOT_PATH, INSTANCE; LOG_EVENTS (`debug`: logEvents 'debug'); NO_HOOKS
 * (`1`: no enableShutdownHooks). Prints, on stdout besides Nest's own log lines:
 * `ready <INSTANCE> leads=<true|false> session=<ms>`: init resolved, what a @Leader call made right
 * then returned, and the session timeout the server granted; `elected <INSTANCE> <real ms>` at the start of each term (the real clock, comparable
 * across the processes of one machine).
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { DistributedLock, Leader, LockService, OnLeadership, ZkLockModule } from '../../../lib/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const instance = env('INSTANCE');

@Injectable()
class Jobs {
  @Cron('* * * * * *')
  @DistributedLock('report', { onBusy: 'skip' })
  report(): void {
    // The run itself prints nothing: the test counts the library's lines.
  }

  @OnLeadership('relay')
  elected(): void {
    process.stdout.write(`elected ${instance} ${Math.round(performance.timeOrigin + performance.now())}\n`);
  }

  @Leader('relay')
  leads(): boolean {
    return true;
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    ZkLockModule.forRoot({
      connectionString: env('ZK_CONNECT'),
      rootPath: env('ROOT_PATH'),
      ...(process.env.LOG_EVENTS === 'debug' ? { logEvents: 'debug' as const } : {}),
    }),
  ],
  providers: [Jobs],
})
class FirstHourModule {}

const app = await NestFactory.createApplicationContext(FirstHourModule);
if (process.env.NO_HOOKS !== '1') app.enableShutdownHooks();
await app.init();
const leads = app.get(Jobs).leads() === true;
process.stdout.write(`ready ${instance} leads=${leads} session=${app.get(LockService).sessionInfo().sessionTimeoutMs}\n`);

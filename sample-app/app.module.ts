import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { ZkLockModule } from '../lib/index.js';
import { CounterController } from './counter.controller.js';
import { CounterService } from './counter.service.js';
import { CounterStore } from './counter.store.js';
import { ReportJob } from './report.job.js';

/** Configured from the environment only: ZK_CONNECT, PORT, COUNTER_FILE, CRON_LOG_FILE, INSTANCE. */
@Module({
  imports: [
    ConfigModule.forRoot({ ignoreEnvFile: true }),
    ScheduleModule.forRoot(),
    ZkLockModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        connectionString: config.getOrThrow<string>('ZK_CONNECT'),
        rootPath: '/demo-locks',
        // Lock paths are created so that only this identity may create or delete lock nodes.
        digest: config.get<string>('ZK_DIGEST') ?? 'sample-app:demo-only-secret',
        shutdownGraceMs: Number(config.get<string>('SHUTDOWN_GRACE_MS') ?? 5000),
      }),
    }),
  ],
  controllers: [CounterController],
  providers: [
    {
      provide: CounterStore,
      inject: [ConfigService],
      useFactory: (config: ConfigService) => new CounterStore(config.getOrThrow<string>('COUNTER_FILE')),
    },
    CounterService,
    ReportJob,
  ],
})
export class AppModule {}

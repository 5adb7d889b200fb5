import { Module } from '@nestjs/common';
import { ZkLockModule } from '../../lib/index.js';
import { BenchAppController } from './bench-app.controller.js';

/** Configured from the environment: ZK_CONNECT, SESSION_TIMEOUT_MS. */
@Module({
  imports: [
    ZkLockModule.forRoot({
      connectionString: process.env.ZK_CONNECT ?? '',
      sessionTimeoutMs: Number(process.env.SESSION_TIMEOUT_MS ?? 15_000),
      rootPath: '/bench-http',
    }),
  ],
  controllers: [BenchAppController],
})
export class BenchAppModule {}

import { Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { DistributedLockExplorer } from './distributed-lock.explorer.js';
import { ElectionExplorer } from './election.explorer.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockBusyFilter } from './lock-busy.filter.js';
import { LockService } from '../service/lock.service.js';
import { ZkLockConfigurableModule } from '../service/zk-lock.module-definition.js';

/**
 * `ZkLockModule.forRoot({ connectionString })` or `ZkLockModule.forRootAsync({ imports, inject,
 * useFactory })` (also useClass / useExisting); `isGlobal: true` makes LockService visible everywhere.
 * Registers, globally, the interceptor that gives each request its lock context and the filter that
 * answers a busy lock in RPC, WebSocket and GraphQL terms.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    LockService,
    DistributedLockExplorer,
    ElectionExplorer,
    { provide: APP_INTERCEPTOR, useClass: DistributedLockInterceptor },
    { provide: APP_FILTER, useClass: LockBusyFilter },
  ],
  exports: [LockService],
})
export class ZkLockModule extends ZkLockConfigurableModule {}

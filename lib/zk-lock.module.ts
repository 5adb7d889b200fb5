import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { DistributedLockExplorer } from './distributed-lock.explorer.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockService } from './lock.service.js';
import { ZkLockConfigurableModule } from './zk-lock.module-definition.js';

/**
 * `ZkLockModule.forRoot({ connectionString })` or `ZkLockModule.forRootAsync({ imports, inject,
 * useFactory })` (also useClass / useExisting); `isGlobal: true` makes LockService visible everywhere.
 * Registers the interceptor that gives each request its lock context, globally.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [LockService, DistributedLockExplorer, { provide: APP_INTERCEPTOR, useClass: DistributedLockInterceptor }],
  exports: [LockService],
})
export class ZkLockModule extends ZkLockConfigurableModule {}

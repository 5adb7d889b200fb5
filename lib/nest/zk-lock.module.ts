import { type ConfigurableModuleAsyncOptions, type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, DiscoveryModule } from '@nestjs/core';
import { DistributedLockExplorer } from './distributed-lock.explorer.js';
import { ElectionExplorer } from './election.explorer.js';
import { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
import { LockBusyFilter } from './lock-busy.filter.js';
import { LockService } from '../service/lock.service.js';
import { ZkLockConfigurableModule } from '../service/zk-lock.module-definition.js';
import type { ZkLockModuleOptions } from '../service/zk-lock-options.interface.js';

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
export class ZkLockModule {
  /** The module with these options; `isGlobal: true` makes LockService visible in every module. */
  static forRoot(options: ZkLockModuleOptions & { isGlobal?: boolean }): DynamicModule {
    // Nest's generated module class provides the options; the module itself is this one.
    return { ...ZkLockConfigurableModule.forRoot(options), module: ZkLockModule };
  }

  /** The module with options made by a factory (useFactory and inject), a class (useClass) or an existing provider (useExisting). */
  static forRootAsync(options: ConfigurableModuleAsyncOptions<ZkLockModuleOptions, 'create'> & { isGlobal?: boolean }): DynamicModule {
    return { ...ZkLockConfigurableModule.forRootAsync(options), module: ZkLockModule };
  }
}

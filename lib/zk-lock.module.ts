import { Module } from '@nestjs/common';
import { LockService } from './lock.service.js';
import { ZkLockConfigurableModule } from './zk-lock.module-definition.js';

/**
 * `ZkLockModule.forRoot({ connectionString })` or `ZkLockModule.forRootAsync({ imports, inject,
 * useFactory })` (also useClass / useExisting); `isGlobal: true` makes LockService visible everywhere.
 */
@Module({
  providers: [LockService],
  exports: [LockService],
})
export class ZkLockModule extends ZkLockConfigurableModule {}

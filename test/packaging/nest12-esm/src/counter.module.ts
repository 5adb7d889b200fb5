import { Module } from '@nestjs/common';
import { CounterService } from './counter.service.js';
import { CounterStore } from './counter.store.js';
import { DecoratedController } from './decorated.controller.js';
import { WithLockController } from './with-lock.controller.js';

/** The app without its lock module: AppModule adds ZkLockModule, the test the in-memory one. */
@Module({
  controllers: [DecoratedController, WithLockController],
  providers: [CounterStore, CounterService],
})
export class CounterModule {}

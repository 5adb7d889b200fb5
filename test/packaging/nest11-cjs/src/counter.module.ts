import { Module } from '@nestjs/common';
import { CounterService } from './counter.service';
import { CounterStore } from './counter.store';
import { DecoratedController } from './decorated.controller';
import { WithLockController } from './with-lock.controller';

/** The app without its lock module: AppModule adds ZkLockModule, the test the in-memory one. */
@Module({
  controllers: [DecoratedController, WithLockController],
  providers: [CounterStore, CounterService],
})
export class CounterModule {}

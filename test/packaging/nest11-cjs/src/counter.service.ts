import { Injectable } from '@nestjs/common';
import { LockService } from 'nestjs-zk-lock';
import { CounterStore } from './counter.store';

export const COUNTER_LOCK = 'packaging:counter';

@Injectable()
export class CounterService {
  constructor(
    private readonly store: CounterStore,
    private readonly locks: LockService,
  ) {}

  /** For callers that already hold COUNTER_LOCK. */
  incrementHeld(): Promise<number> {
    return this.store.increment();
  }

  incrementWithLock(): Promise<{ value: number; fencingToken: string }> {
    return this.locks.withLock(COUNTER_LOCK, async (lock) => ({ value: await this.store.increment(), fencingToken: lock.fencingToken }));
  }

  read(): Promise<number> {
    return this.store.read();
  }
}

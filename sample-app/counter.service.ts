import { Inject, Injectable } from '@nestjs/common';
import { LockService } from '../lib/index.js';
import { CounterStore } from './counter.store.js';

export const COUNTER_STORE = 'COUNTER_STORE';

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));

@Injectable()
export class CounterService {
  constructor(
    private readonly locks: LockService,
    @Inject(COUNTER_STORE) private readonly store: CounterStore,
  ) {}

  /** Read, think, write: two instances doing this at once lose updates. */
  async incrementUnsafe(): Promise<void> {
    const value = await this.store.read();
    await pause();
    await this.store.write(value + 1);
  }

  /** The same, under a distributed lock, with the fencing token passed to the store. */
  incrementLocked(): Promise<void> {
    return this.locks.withLock('counter', async (lock) => {
      const value = await this.store.read();
      await pause();
      await this.store.write(value + 1, lock.fencingToken);
    });
  }
}

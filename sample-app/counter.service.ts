import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockService } from '../lib/index.js';
import { CounterStore } from './counter.store.js';

@Injectable()
export class CounterService {
  constructor(
    private readonly store: CounterStore,
    private readonly locks: LockService,
  ) {}

  reset(): Promise<void> {
    return this.store.reset();
  }

  read(): Promise<number> {
    return this.store.read();
  }

  /**
   * Read, think, write. The pause stands for the work a real service does between the two, and
   * gives other requests (in this process or another) the chance to read the same value.
   */
  async increment(fencingToken?: string): Promise<number> {
    const value = await this.store.read();
    await sleep(Math.random() * 3);
    await this.store.write(value + 1, fencingToken);
    return value + 1;
  }

  /** The same under the lock, taken here rather than by a decorator. */
  incrementWithLock(): Promise<number> {
    return this.locks.withLock('counter', (lock) => this.increment(lock.fencingToken));
  }
}

import { Controller, Get, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import { DistributedLock, LockService } from '../lib/index.js';
import { CounterService } from './counter.service.js';

interface CounterValue {
  value: number;
}

@Controller('counter')
export class CounterController {
  constructor(
    private readonly counter: CounterService,
    private readonly locks: LockService,
  ) {}

  @Get()
  async read(): Promise<CounterValue> {
    return { value: await this.counter.read() };
  }

  @Post('reset')
  @HttpCode(204)
  reset(): Promise<void> {
    return this.counter.reset();
  }

  /** Loses updates as soon as two requests overlap: the baseline the locked endpoints are measured against. */
  @Post('unsafe')
  async unsafe(): Promise<CounterValue> {
    return { value: await this.counter.increment() };
  }

  @Post('decorated')
  @DistributedLock('counter')
  async decorated(): Promise<CounterValue> {
    const lock = this.locks.heldLock('counter');
    // Without the lock the fencing token would be missing and the store could not refuse a stale write.
    if (!lock) throw new Error('@DistributedLock did not give this request the lock on "counter"');
    return { value: await this.counter.increment(lock.fencingToken) };
  }

  @Post('direct')
  async direct(): Promise<CounterValue> {
    return { value: await this.counter.incrementWithLock() };
  }

  /**
   * Holds the counter's lock for up to `ms`, or until the lock is lost or taken away at shutdown:
   * the handler watches its lock's signal, as work that must stay exclusive should.
   */
  @Post('hold/:ms')
  @DistributedLock('counter')
  async hold(@Param('ms', ParseIntPipe) ms: number): Promise<{ held: 'until the end' | 'until lost' }> {
    const signal = this.locks.heldLock('counter')?.signal;
    const lost = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    return { held: lost ? 'until lost' : 'until the end' };
  }
}

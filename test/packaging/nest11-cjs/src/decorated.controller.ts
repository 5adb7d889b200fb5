import { Controller, Get, Post } from '@nestjs/common';
import { DistributedLock, LockService } from 'nestjs-zk-lock';
import { COUNTER_LOCK, CounterService } from './counter.service';

@Controller('decorated')
export class DecoratedController {
  constructor(
    private readonly counter: CounterService,
    private readonly locks: LockService,
  ) {}

  @Post()
  @DistributedLock(COUNTER_LOCK, { waitTimeoutMs: 60_000 })
  async increment(): Promise<{ value: number; fencingToken: string | undefined }> {
    const value = await this.counter.incrementHeld();
    return { value, fencingToken: this.locks.heldLock(COUNTER_LOCK)?.fencingToken };
  }

  @Get()
  async read(): Promise<{ value: number }> {
    return { value: await this.counter.read() };
  }
}

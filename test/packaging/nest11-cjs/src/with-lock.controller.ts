import { Controller, Post } from '@nestjs/common';
import { CounterService } from './counter.service';

@Controller('with-lock')
export class WithLockController {
  constructor(private readonly counter: CounterService) {}

  @Post()
  increment(): Promise<{ value: number; fencingToken: string }> {
    return this.counter.incrementWithLock();
  }
}

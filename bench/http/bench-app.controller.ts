import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { DistributedLock, LockService } from '../../lib/index.js';

interface Answer {
  id: string;
}

/**
 * The same trivial handler three ways: unlocked (the HTTP floor), guarded by @DistributedLock, and
 * calling LockService.withLock itself. The difference between the last two is the decorator's own
 * cost. The lock is per id, so requests with different ids never wait for each other.
 */
@Controller()
export class BenchAppController {
  /** Requests handled per endpoint, so the benchmark can divide the server's request count exactly. */
  private readonly handled = { none: 0, decorated: 0, direct: 0 };

  constructor(private readonly locks: LockService) {}

  @Get('handled')
  counts(): Record<string, number> {
    return this.handled;
  }

  @Post('none/:id')
  @HttpCode(200)
  none(@Param('id') id: string): Answer {
    this.handled.none += 1;
    return { id };
  }

  @Post('decorated/:id')
  @HttpCode(200)
  @DistributedLock((id: string) => `item:${id}`)
  decorated(@Param('id') id: string): Answer {
    this.handled.decorated += 1;
    return { id };
  }

  @Post('direct/:id')
  @HttpCode(200)
  direct(@Param('id') id: string): Promise<Answer> {
    return this.locks.withLock(`item:${id}`, () => {
      this.handled.direct += 1;
      return { id };
    });
  }
}

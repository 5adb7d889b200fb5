import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService } from '../../lib/service/lock.service.js';

@Injectable()
class NeedsLocks {
  constructor(readonly locks: LockService) {}
}

describe('test compilation', () => {
  it('emits the constructor parameter types Nest injects by', () => {
    const types = Reflect.getMetadata('design:paramtypes', NeedsLocks) as unknown[];
    expect(types[0]).toBe(LockService);
  });
});

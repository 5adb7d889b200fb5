import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { LockService } from '../../lib/lock.service.js';
import { CounterService } from '../../sample-app/counter.service.js';

describe('test compilation', () => {
  it('emits the constructor parameter types Nest injects by', () => {
    const types = Reflect.getMetadata('design:paramtypes', CounterService) as unknown[];
    expect(types[0]).toBe(LockService);
  });
});

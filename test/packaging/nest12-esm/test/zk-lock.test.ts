import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockService } from 'nestjs-zk-lock';
import { InMemoryZooKeeper, ZkLockTestingModule } from 'nestjs-zk-lock/testing';
import { CounterModule } from '../src/counter.module.js';
import { COUNTER_LOCK, CounterService } from '../src/counter.service.js';

describe('CounterService with ZkLockTestingModule under Vitest (in-memory ZooKeeper)', () => {
  const zookeeper = new InMemoryZooKeeper();
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ zookeeper, isGlobal: true }), CounterModule],
    }).compile();
    await moduleRef.init();
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('serialises concurrent increments: no update is lost, every grant has its own token', async () => {
    const counter = moduleRef.get(CounterService);
    const results = await Promise.all(Array.from({ length: 10 }, () => counter.incrementWithLock()));
    expect(results.map((r) => r.value).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(new Set(results.map((r) => r.fencingToken)).size).toBe(10);
  });

  it('sees a lock held by another application on the same ZooKeeper', async () => {
    const other = await Test.createTestingModule({ imports: [ZkLockTestingModule.forRoot({ zookeeper })] }).compile();
    await other.init();
    try {
      const held = await other.get(LockService).acquire(COUNTER_LOCK);
      expect(await moduleRef.get(LockService).tryAcquire(COUNTER_LOCK)).toBeNull();
      await held.release();
    } finally {
      await other.close();
    }
  });
});

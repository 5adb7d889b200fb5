import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { DistributedLock, LockService } from 'nestjs-zk-lock';
import { InMemoryZooKeeper, ZkLockTestingModule } from 'nestjs-zk-lock/testing';

@Injectable()
class CounterService {
  value = 0;

  // A read-modify-write with an await in between: without the lock, concurrent calls lose updates.
  @DistributedLock('counter')
  async increment(): Promise<number> {
    const read = this.value;
    await new Promise((resolve) => setImmediate(resolve));
    this.value = read + 1;
    return this.value;
  }
}

describe('CounterService with ZkLockTestingModule (in-memory ZooKeeper)', () => {
  const zookeeper = new InMemoryZooKeeper();
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ zookeeper })],
      providers: [CounterService],
    }).compile();
    await moduleRef.init();
  });

  afterEach(async () => {
    await moduleRef.close();
  });

  it('serialises concurrent increments: no update is lost', async () => {
    const counter = moduleRef.get(CounterService);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => counter.increment()),
    );
    expect(results.sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
  });

  it('sees a lock held by another application on the same ZooKeeper', async () => {
    const other = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ zookeeper })],
    }).compile();
    await other.init();
    try {
      const held = await other.get(LockService).acquire('counter');
      expect(await moduleRef.get(LockService).tryAcquire('counter')).toBeNull();
      await held.release();
      const mine = await moduleRef.get(LockService).tryAcquire('counter');
      expect(mine).not.toBeNull();
      await mine?.release();
    } finally {
      await other.close();
    }
  });
});

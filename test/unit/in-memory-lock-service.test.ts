/**
 * What the in-memory testing kit offers beyond the contract it shares with a real server
 * (test/integration/testing-kit*.test.ts): Nest wiring, fake timers, and the faults it can play.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DistributedLock, LockLostError, LockOperationError, LockService, LockTimeoutError } from '../../lib/index.js';
import {
  createInMemoryLockService,
  InMemoryConnection,
  InMemoryZooKeeper,
  ZkLockTestingModule,
} from '../../lib/testing/index.js';

@Injectable()
class ReportJob {
  running = 0;
  most = 0;
  lostReasons: unknown[] = [];
  private finish: (() => void)[] = [];

  constructor(private readonly locks: LockService) {}

  @DistributedLock('report')
  async run(): Promise<void> {
    this.running += 1;
    this.most = Math.max(this.most, this.running);
    const lock = this.locks.heldLock('report')!;
    lock.signal.addEventListener('abort', () => this.lostReasons.push(lock.signal.reason));
    await new Promise<void>((resolve) => this.finish.push(resolve));
    this.running -= 1;
  }

  finishOne(): boolean {
    const next = this.finish.shift();
    next?.();
    return next !== undefined;
  }
}

async function app(zookeeper: InMemoryZooKeeper) {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockTestingModule.forRoot({ zookeeper, logEvents: false })],
    providers: [ReportJob],
  }).compile();
  const application = moduleRef.createNestApplication({ logger: false });
  await application.init();
  return application;
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('ZkLockTestingModule', () => {
  it('runs @DistributedLock methods of two applications one at a time on a shared in-memory ZooKeeper', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const one = await app(zookeeper);
    const two = await app(zookeeper);
    const jobOne = one.get(ReportJob);
    const jobTwo = two.get(ReportJob);
    const first = jobOne.run();
    await vi.waitFor(() => expect(jobOne.running).toBe(1));
    const second = jobTwo.run();
    await vi.waitFor(() => expect(zookeeper.getChildren('/locks/report')).toHaveLength(2));
    expect(jobTwo.running).toBe(0);
    jobOne.finishOne();
    await first;
    await vi.waitFor(() => expect(jobTwo.running).toBe(1));
    jobTwo.finishOne();
    await second;
    expect(Math.max(jobOne.most, jobTwo.most)).toBe(1);
    await one.close();
    await two.close();
    expect(zookeeper.nodes()).toEqual(['/', '/locks']);
  });

  it('expires the application’s session on demand: the decorated method’s lock signal aborts with LockLostError', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const application = await app(zookeeper);
    const job = application.get(ReportJob);
    const running = job.run();
    await vi.waitFor(() => expect(job.running).toBe(1));
    application.get(InMemoryZooKeeper).expireSession(application.get(LockService));
    expect(job.lostReasons).toHaveLength(1);
    expect(job.lostReasons[0]).toBeInstanceOf(LockLostError);
    job.finishOne();
    await running; // the method's own result: the loss reached it through the signal
    expect(application.get(InMemoryConnection).state).toBe('connected'); // a new session
    await application.close();
    expect(application.get(InMemoryConnection).state).toBe('closed');
  });
});

describe('createInMemoryLockService', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('works under fake timers, and a wait times out when the clock is advanced', async () => {
    vi.useFakeTimers();
    const locks = await createInMemoryLockService({ logEvents: false });
    const zookeeper = InMemoryZooKeeper.of(locks)!;
    const other = await zookeeper.createLockService({ logEvents: false });
    const held = await locks.acquire('r');
    expect(await other.tryAcquire('r')).toBeNull();
    const waiting = other.acquire('r', { waitTimeoutMs: 30_000 });
    const outcome = waiting.then(
      () => 'granted',
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(29_999);
    expect(zookeeper.getChildren('/locks/r')).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBeInstanceOf(LockTimeoutError);
    await held.release();
    await zookeeper.close();
    expect(zookeeper.nodes()).toEqual(['/', '/locks']);
  });

  it('keeps locks through a disconnection shorter than the session timeout, and loses them after it', async () => {
    vi.useFakeTimers();
    const zookeeper = new InMemoryZooKeeper();
    const locks = await zookeeper.createLockService({ sessionTimeoutMs: 5000, logEvents: false });
    const states: string[] = [];
    locks.onConnectionStateChange((state) => states.push(state));
    const held = await locks.acquire('r');
    zookeeper.disconnect(locks);
    expect(locks.connectionState).toBe('suspended');
    await vi.advanceTimersByTimeAsync(4999);
    zookeeper.reconnect(locks);
    expect(held.isHeld()).toBe(true);
    zookeeper.disconnect(locks);
    await vi.advanceTimersByTimeAsync(5000);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await flush();
    expect(states).toEqual(['suspended', 'reconnected', 'suspended', 'lost', 'connected']);
    expect(zookeeper.getChildren('/locks/r')).toEqual([]);
    await zookeeper.close();
  });

  it('hands the lock to the next caller of the process only while connected: disconnected, the node goes back and ZooKeeper grants it', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const locks = await zookeeper.createLockService({ sessionTimeoutMs: 60_000, logEvents: false });
    const first = await locks.acquire('r'); // alone in the process: a node of its own
    const second = locks.acquire('r'); // starts the cohort: the cohort's node, behind first's
    const third = locks.acquire('r'); // waits in the cohort, for a local handoff from second
    let thirdHeld = false;
    void third.then(() => (thirdHeld = true));
    await first.release();
    const cohortHolder = await second;
    expect(cohortHolder.fencingToken.endsWith('000000')).toBe(true);

    zookeeper.disconnect(locks);
    const released = cohortHolder.release();
    await flush();
    expect(thirdHeld).toBe(false); // no local handoff while the session's fate is unknown
    zookeeper.reconnect(locks);
    await released;
    const next = await third;
    // Granted by ZooKeeper on a node of its own (last six digits zero), not handed the cohort's node.
    expect(next.fencingToken.endsWith('000000')).toBe(true);
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(cohortHolder.fencingToken));
    await next.release();
    expect(zookeeper.getChildren('/locks/r')).toEqual([]);
    await zookeeper.close();
  });

  it('gives fencing tokens from zxids, which grow with every write', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const locks = await zookeeper.createLockService({ logEvents: false });
    const before = zookeeper.zxid;
    const first = await locks.acquire('r');
    expect(zookeeper.zxid).toBeGreaterThan(before);
    await first.release();
    const second = await locks.acquire('r');
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    await second.release();
    await zookeeper.close();
  });

  it('applies the digest option’s ACL: a client without it cannot take the lock', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const owner = await zookeeper.createLockService({ digest: 'app:secret', rootPath: '/guarded', logEvents: false });
    const held = await owner.acquire('r');
    await held.release();
    const stranger = await zookeeper.createLockService({ rootPath: '/guarded', logEvents: false });
    await expect(stranger.acquire('other')).rejects.toBeInstanceOf(LockOperationError);
    await zookeeper.close();
  });

  it('refuses to act on a LockService it did not make', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const elsewhere = await createInMemoryLockService({ logEvents: false });
    expect(() => zookeeper.expireSession(elsewhere)).toThrow(/does not run on this InMemoryZooKeeper/);
    await InMemoryZooKeeper.of(elsewhere)!.close();
  });
});

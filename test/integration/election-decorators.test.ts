/**
 * @Leader and @OnLeadership in Nest applications on one real ZooKeeper: the group is joined at
 * bootstrap without code, a @Leader method runs on the leader only (skipped elsewhere, with an
 * event), heldLock(group) is the leadership inside it, @OnLeadership gets the handle at each term,
 * a failing @OnLeadership resigns, shutdown hands leadership over, and bad placements fail start-up.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Interval } from '@nestjs/schedule';
import { describe, expect, it } from 'vitest';
import { DistributedLock, InvalidOptionsError, Leader, type LeaderHandle, type LockEvent, LockService, OnLeadership, ZkLockModule } from '../../lib/index.js';
import { eventually, STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

describe('@Leader and @OnLeadership', () => {
  const zk = useZooKeeper();

  @Injectable()
  class Relay {
    runs = 0;
    terms: LeaderHandle[] = [];
    failNext = false;
    constructor(private readonly locks: LockService) {}

    @Leader('relay')
    async relayOnce(): Promise<string | undefined> {
      this.runs += 1;
      return this.locks.heldLock('relay')?.fencingToken;
    }

    @OnLeadership('relay')
    async start(handle: LeaderHandle): Promise<void> {
      this.terms.push(handle);
      if (this.failNext) {
        this.failNext = false;
        throw new Error('the consumer could not start');
      }
      await new Promise((resolve) => handle.signal.addEventListener('abort', resolve));
    }
  }

  async function start(rootPath: string, providers: unknown[] = [Relay]): Promise<INestApplication> {
    const application = await create(rootPath, providers);
    await application.init();
    return application;
  }

  async function create(rootPath: string, providers: unknown[]): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, rootPath, ...STEADY_SESSION, shutdownGraceMs: 2000 })],
      providers: providers as never[],
    }).compile();
    return moduleRef.createNestApplication({ logger: false });
  }

  it('runs the method on the leader only, calls @OnLeadership at each term, and hands over at shutdown', async () => {
    const rootPath = uniqueRoot('leader-decorators');
    const a = await start(rootPath);
    const relayA = a.get(Relay);
    await eventually(() => relayA.terms.length === 1, { what: 'a to lead' });
    const b = await start(rootPath);
    const relayB = b.get(Relay);
    const skipped: LockEvent[] = [];
    b.get(LockService).events$.subscribe((event) => event.type === 'skipped' && skipped.push(event));
    await eventually(async () => (await b.get(LockService).elect('relay').participants()).length === 2, { what: 'b to queue' });
    expect(await relayA.relayOnce()).toBe(relayA.terms[0]!.fencingToken);
    expect(await relayB.relayOnce()).toBeUndefined();
    expect([relayA.runs, relayB.runs]).toEqual([1, 0]);
    expect(skipped).toMatchObject([{ type: 'skipped', resource: 'relay', reason: 'not-leader' }]);
    await a.close();
    expect(relayA.terms[0]!.signal.aborted).toBe(true);
    await eventually(() => relayB.terms.length === 1, { what: 'b to lead' });
    expect(BigInt(relayB.terms[0]!.fencingToken)).toBeGreaterThan(BigInt(relayA.terms[0]!.fencingToken));
    expect(await relayB.relayOnce()).toBe(relayB.terms[0]!.fencingToken);
    await b.close();
  });

  it('resigns when @OnLeadership fails while leading, so that another instance leads', async () => {
    const rootPath = uniqueRoot('leader-fails');
    const a = await start(rootPath);
    const b = await start(rootPath);
    const [relayA, relayB] = [a.get(Relay), b.get(Relay)];
    await eventually(() => relayA.terms.length + relayB.terms.length === 1, { what: 'one to lead' });
    const [first, second] = relayA.terms.length === 1 ? [relayA, relayB] : [relayB, relayA];
    second.failNext = true;
    await (first === relayA ? a : b).get(LockService).elect('relay').resign();
    // The second leads, fails at once, resigns: the first leads again.
    await eventually(() => first.terms.length === 2, { what: 'the first to lead again' });
    expect(second.terms).toHaveLength(1);
    expect(second.terms[0]!.signal.aborted).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('fails start-up for a group that is also a @DistributedLock resource', async () => {
    @Injectable()
    class Both {
      @Leader('jobs') leaderJob(): void {}
      @DistributedLock('jobs') lockedJob(): void {}
    }
    const application = await create(uniqueRoot('leader-clash'), [Both]);
    await expect(application.init()).rejects.toThrow(InvalidOptionsError);
    await application.close();
  });

  it('refuses an empty group where it is declared', () => {
    expect(() => Leader('')).toThrow(/non-empty string/);
    expect(() => OnLeadership('g', { zkpath: '/x' } as never)).toThrow(/zkpath is not an option/);
  });
  it('with oncePerTick, a new leader does not run a tick its predecessor ran (a handover within one period)', async () => {
    @Injectable()
    class Ticker {
      runs = 0;
      @Interval(60_000)
      @Leader('ticker', { oncePerTick: true })
      async tick(): Promise<void> {
        this.runs += 1;
      }
    }
    const rootPath = uniqueRoot('leader-tick');
    const a = await start(rootPath, [Ticker]);
    await a.get(LockService).elect('ticker').leadership();
    const b = await start(rootPath, [Ticker]);
    const skipped: LockEvent[] = [];
    b.get(LockService).events$.subscribe((event) => event.type === 'skipped' && skipped.push(event));
    await a.get(Ticker).tick();
    expect(a.get(Ticker).runs).toBe(1);
    await a.close();
    await b.get(LockService).elect('ticker').leadership();
    await b.get(Ticker).tick(); // the same 60 s tick, on the new leader
    expect(b.get(Ticker).runs).toBe(0);
    expect(skipped).toMatchObject([{ resource: 'ticker', reason: 'ran-this-tick' }]);
    await b.close();
  });

  it('fails start-up for oncePerTick on a method without @Cron or @Interval', async () => {
    @Injectable()
    class Unscheduled {
      @Leader('unscheduled', { oncePerTick: true }) job(): void {}
    }
    const application = await create(uniqueRoot('leader-unscheduled'), [Unscheduled]);
    await expect(application.init()).rejects.toThrow(/has no @Cron .* and no @Interval/);
    await application.close();
  });
});

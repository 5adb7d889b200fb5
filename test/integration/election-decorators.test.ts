/**
 * @Leader and @OnLeadership in Nest applications on one real ZooKeeper: the group is joined at
 * bootstrap without code, a @Leader method runs on the leader only (skipped elsewhere, with an
 * event), heldLock(group) is the leadership inside it, @OnLeadership gets the handle at each term,
 * a failing @OnLeadership resigns, shutdown hands leadership over, and bad placements fail start-up.
 */
import 'reflect-metadata';
import { type BeforeApplicationShutdown, Injectable, type INestApplication, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Interval } from '@nestjs/schedule';
import { describe, expect, it } from 'vitest';
import { DistributedLock, InvalidOptionsError, Leader, type LeaderHandle, LeadershipLostError, type LockEvent, LockService, OnLeadership, ZkLockModule } from '../../lib/index.js';
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
    expect(skipped).toMatchObject([{ type: 'skipped', resource: 'relay', mode: 'election', reason: 'not-leader' }]);
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
    expect(skipped).toMatchObject([{ resource: 'ticker', mode: 'election', reason: 'ran-this-tick' }]);
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
  it('keeps a failing @OnLeadership out of line for a while instead of spinning', async () => {
    @Injectable()
    class Broken {
      /** performance.now() of each call. */
      calls: number[] = [];
      @OnLeadership('broken')
      async start(): Promise<void> {
        this.calls.push(performance.now());
        throw new Error('cannot start');
      }
    }
    const application = await start(uniqueRoot('leader-broken'), [Broken]);
    const { calls } = application.get(Broken);
    // Alone in the group it leads again after each pause: the third term, whenever it comes.
    await eventually(() => calls.length >= 3, { what: 'the third term', timeoutMs: 30_000 });
    expect(calls.length).toBe(3); // not thousands
    // The pauses double from 1 s: the next term starts no sooner (a loaded machine only adds to
    // them; 10 ms allowed for timers, which count whole milliseconds of the loop's cached clock).
    const gaps = [calls[1]! - calls[0]!, calls[2]! - calls[1]!];
    console.log(`failing @OnLeadership: terms ${gaps.map(Math.round).join(' ms, then ')} ms apart`);
    expect(gaps[0]).toBeGreaterThanOrEqual(990);
    expect(gaps[1]).toBeGreaterThanOrEqual(1990);
    await application.close();
  });

  it('gives heldLock(group) inside a @Leader call the term it runs under, also after that term ended', async () => {
    let release!: () => void;
    const paused = new Promise<void>((resolve) => (release = resolve));
    @Injectable()
    class Slow {
      constructor(private readonly locks: LockService) {}
      @Leader('slow')
      async run(): Promise<{ before: string; after: unknown }> {
        const before = this.locks.heldLock('slow')!.fencingToken;
        await paused;
        let after: unknown;
        try {
          this.locks.heldLock('slow')!.assertHeld();
        } catch (error) {
          after = error;
        }
        return { before, after };
      }
    }
    const application = await start(uniqueRoot('leader-scope'), [Slow]);
    const election = application.get(LockService).elect('slow');
    const first = await election.leadership();
    const running = application.get(Slow).run();
    const resigned = election.resign(); // waits for the run (stopsWith), its signal aborted at once
    await eventually(() => first.signal.aborted, { what: 'the term to end' });
    release();
    const { before, after } = await running;
    await resigned;
    expect(before).toBe(first.fencingToken);
    expect(after).toBeInstanceOf(LeadershipLostError);
    await application.close();
  });

  it('ends leadership when shutdown begins, before the before-shutdown hooks run', async () => {
    const seen: boolean[] = [];
    @Injectable()
    class Watcher implements BeforeApplicationShutdown {
      term: LeaderHandle | undefined;
      @OnLeadership('early')
      lead(handle: LeaderHandle): void {
        this.term = handle;
      }
      beforeApplicationShutdown(): void {
        seen.push(this.term!.signal.aborted);
      }
    }
    const application = await start(uniqueRoot('leader-early'), [Watcher]);
    await eventually(() => application.get(Watcher).term !== undefined, { what: 'the term' });
    await application.close();
    expect(seen).toEqual([true]);
  });

  it('fails start-up for @OnLeadership on a request-scoped provider', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @OnLeadership('per-request') lead(): void {}
    }
    const application = await create(uniqueRoot('leader-request'), [PerRequest]);
    await expect(application.init()).rejects.toThrow(/request-scoped provider.*singleton/);
    await application.close();
  });

  it('fails start-up for @Leader on a request-scoped provider, with a typed error', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @Leader('per-request-leader') run(): void {}
    }
    const application = await create(uniqueRoot('leader-request-call'), [PerRequest]);
    const failure = await application.init().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidOptionsError);
    expect(String(failure)).toMatch(/@Leader.*PerRequest\.run is on a request-scoped provider.*singleton/);
    await application.close();
  });

  it('knows who leads when init resolves: a lone instance\'s first @Leader call runs', async () => {
    @Injectable()
    class Lone {
      @Leader('lone-first-call') run(): string {
        return 'ran';
      }
    }
    const application = await start(uniqueRoot('leader-first-call'), [Lone]);
    expect(application.get(Lone).run()).toBe('ran');
    await application.close();
  });
});

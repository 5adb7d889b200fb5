import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError, type LockEvent, LockService, type ZkConnection, type ZkLockModuleOptions } from '../../lib/index.js';
import { LockMetrics } from '../../lib/metrics/index.js';
import { tickRecordPath } from '../../lib/recipes/tick-record.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';

describe('tick claims and minimum holds on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const services: LockService[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.onApplicationShutdown();
  });

  async function services2(name: string, options: Partial<ZkLockModuleOptions> = {}): Promise<[LockService, LockService]> {
    const rootPath = uniqueRoot(name);
    const made = [0, 1].map(() => new LockService({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath, rootAclCheck: 'off', ...options }));
    services.push(...made);
    await Promise.all(made.map((service) => service.onModuleInit()));
    return made as [LockService, LockService];
  }

  it('gives one cron tick to exactly one of many concurrent claimants, and the next tick again to one', async () => {
    const [a, b] = await services2('ticks-cron');
    const claim = (service: LockService, tick: number) => service.claimTick('jobs:report', { job: 'Jobs.report', schedule: 'cron * * * * * *', tick });
    const first = await Promise.all([a, b, a, b, a, b].map((service) => claim(service, 1_000)));
    expect(first.filter((result) => result.claimed)).toHaveLength(1);
    const again = await Promise.all([a, b].map((service) => claim(service, 1_000)));
    expect(again.map((result) => result.claimed)).toEqual([false, false]);
    const next = await Promise.all([b, a, b].map((service) => claim(service, 2_000)));
    expect(next.filter((result) => result.claimed)).toHaveLength(1);
    // An older tick (a clock further behind than a period) never runs again.
    expect((await claim(a, 1_500)).claimed).toBe(false);
  });

  it('keeps one record node per job, overwritten, at <rootPath>/#ticks/<resource>/<job>; another job on the same lock has its own', async () => {
    const [a] = await services2('ticks-record');
    const observer = await connect();
    for (const tick of [1, 2, 3, 4, 5]) await a.claimTick('jobs:shared', { job: 'Jobs.one', schedule: 'cron 0 * * * * *', tick });
    expect((await a.claimTick('jobs:shared', { job: 'Jobs.two', schedule: 'cron 0 * * * * *', tick: 5 })).claimed).toBe(true);
    const path = tickRecordPath((a as unknown as { parts: { recipes: { runtime: { rootPath: string } } } }).parts.recipes.runtime.rootPath, 'jobs:shared', 'Jobs.one');
    const folder = path.slice(0, path.lastIndexOf('/'));
    expect((await childrenOf(observer, folder)).sort()).toEqual(['Jobs.one', 'Jobs.two']);
    const session = await observer.session();
    expect(JSON.parse((await session.getData(path)).data.toString())).toMatchObject({ schedule: 'cron 0 * * * * *', tick: 5 });
  });

  it('counts a changed schedule as a new one: its first tick runs', async () => {
    const [a] = await services2('ticks-schedule');
    expect((await a.claimTick('jobs:x', { job: 'J.x', schedule: 'cron 0 * * * * *', tick: 10 })).claimed).toBe(true);
    expect((await a.claimTick('jobs:x', { job: 'J.x', schedule: 'cron */30 * * * * *', tick: 10 })).claimed).toBe(true);
  });

  it('measures an interval on ZooKeeper\'s clock: one claim per period, whoever claims', async () => {
    const [a, b] = await services2('ticks-interval');
    const claim = (service: LockService, periodMs: number) => service.claimTick('jobs:i', { job: 'J.i', schedule: 'interval', periodMs });
    const first = await Promise.all([a, b, a, b].map((service) => claim(service, 3_600_000)));
    expect(first.filter((result) => result.claimed)).toHaveLength(1);
    // An hour has not passed on the server's clock since: no claim is due.
    expect((await Promise.all([b, a].map((service) => claim(service, 3_600_000)))).map((result) => result.claimed)).toEqual([false, false]);
    // With a period of 1 ms (no slack under 0.1 ms), a later claim is due as soon as the server's clock moved on.
    const short1 = await a.claimTick('jobs:i', { job: 'J.i', schedule: 'interval short', periodMs: 1 });
    const short2 = await b.claimTick('jobs:i', { job: 'J.i', schedule: 'interval short', periodMs: 1 });
    expect(short1.claimed).toBe(true);
    expect(short2.tick).toBeGreaterThanOrEqual(short1.tick);
    expect(short2.claimed).toBe(short2.tick - short1.tick >= 0.9);
  });

  it('times an interval run from when its timer fired: the stamp less the time since', async () => {
    const [a] = await services2('ticks-fired');
    const fired = await a.claimTick('jobs:f', { job: 'J.f', schedule: 'interval', periodMs: 1, firedAt: performance.now() - 5_000 });
    const now = await a.claimTick('jobs:f', { job: 'J.f', schedule: 'interval', periodMs: 1 });
    expect(fired.claimed && now.claimed).toBe(true);
    expect(now.tick - fired.tick).toBeGreaterThanOrEqual(5_000);
  });

  it('refuses a claim without a tick or a period, and a negative holdAtLeastMs', async () => {
    const [a] = await services2('ticks-invalid');
    await expect(a.claimTick('jobs:x', { job: 'J', schedule: 's' })).rejects.toThrow(InvalidOptionsError);
    await expect(a.claimTick('jobs:x', { job: '', schedule: 's', tick: 1 })).rejects.toThrow(/claim\.job/);
    await expect(a.acquire('jobs:x', { holdAtLeastMs: -1 })).rejects.toThrow(/holdAtLeastMs/);
  });

  it('holdAtLeastMs: release resolves at once, others find the lock busy until the hold ends, then it is free', async () => {
    const [a, b] = await services2('hold');
    const events: LockEvent[] = [];
    a.events$.subscribe((event) => events.push(event));
    const handle = await a.acquire('jobs:held', { holdAtLeastMs: 400 });
    await handle.release();
    expect(handle.isHeld()).toBe(false);
    expect(await b.tryAcquire('jobs:held')).toBeNull();
    await eventually(() => events.some((event) => event.type === 'released'), { what: 'the background release' });
    const released = events.find((event) => event.type === 'released');
    // Timers fire on a millisecond clock: the hold may end up to 1 ms before performance.now() says 400.
    expect(released?.type === 'released' && released.holdMs).toBeGreaterThanOrEqual(399);
    const taken = await b.tryAcquire('jobs:held');
    expect(taken).not.toBeNull();
    await taken!.release();
    // Control: without holdAtLeastMs the lock is free as soon as release resolves.
    await (await a.acquire('jobs:held')).release();
    const free = await b.tryAcquire('jobs:held');
    expect(free).not.toBeNull();
    await free!.release();
  });

  it('holdAtLeastMs on withLock: the call returns when fn does, the lock stays held for the rest of the hold', async () => {
    const [a, b] = await services2('hold-withlock');
    expect(await a.withLock('jobs:w', () => 'done', { holdAtLeastMs: 60_000 })).toBe('done');
    expect(await b.tryAcquire('jobs:w')).toBeNull();
    await a.beforeApplicationShutdown();
    expect(await b.tryAcquire('jobs:w')).not.toBeNull();
  });

  it('holdAtLeastMs: shutdown ends the hold at once (no grace), and so does a lost session', async () => {
    const [a, b] = await services2('hold-end', { shutdownGraceMs: 60_000 });
    await (await a.acquire('jobs:shutdown', { holdAtLeastMs: 60_000 })).release();
    expect(await b.tryAcquire('jobs:shutdown')).toBeNull();
    await a.beforeApplicationShutdown(); // would wait 60 s for a holder still running
    const taken = await b.tryAcquire('jobs:shutdown');
    expect(taken).not.toBeNull();
    await taken!.release();

    const [c, d] = await services2('hold-lost');
    const connection = (c as unknown as { parts: { connection: ZkConnection } }).parts.connection;
    await (await c.acquire('jobs:lost', { holdAtLeastMs: 60_000 })).release();
    expect(await d.tryAcquire('jobs:lost')).toBeNull();
    await expireSession(connection);
    await eventually(() => c.sessionInfo().heldLocks === 0, { what: 'the holder to learn its session ended' });
    const after = await d.acquire('jobs:lost', { waitTimeoutMs: 10_000 });
    await after.release();
  });

  it('reports a skipped run as an event and a metric, at debug level only', async () => {
    const [a] = await services2('skipped');
    const metrics = new LockMetrics();
    metrics.attach(a);
    const events: LockEvent[] = [];
    a.events$.subscribe((event) => events.push(event));
    a.reportSkipped('jobs:s', 'busy');
    a.reportSkipped('jobs:s', 'ran-this-tick', { permits: 2 });
    expect(events.map((event) => event.type === 'skipped' && [event.resource, event.mode, event.reason])).toEqual([
      ['jobs:s', 'exclusive', 'busy'],
      ['jobs:s', 'semaphore', 'ran-this-tick'],
    ]);
    expect(metrics.snapshot().skipped).toEqual({ busy: 1, 'ran-this-tick': 1, 'not-leader': 0 });
    expect(metrics.prometheus()).toContain('lock_skipped_total{mode="exclusive",reason="busy"} 1');
  });
});

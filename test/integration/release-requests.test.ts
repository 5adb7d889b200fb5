import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedLock,
  IncompatibleLockError,
  type LockEvent,
  LockLostError,
  LockReleaseRequestedError,
  LockService,
  LockTimeoutError,
  ZkLockModule,
} from '../../lib/index.js';
import { childrenOf, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import { startLockApp } from '../support/lock-app.js';

/** Revocable holders and release requests (Curator's `__REVOKE__` protocol) among our own clients; Curator itself is in test/peers. */
describe('release requests: revocable holders, requestRelease and forced releases, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  const app = async (rootPath: string, layout?: 'curator' | 'kazoo') => {
    const started = await startLockApp(zk, { ...STEADY_SESSION, rootPath, ...(layout ? { layout } : {}) });
    closers.push(() => started.application.close());
    return started.locks;
  };
  const aborted = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

  it("our layout: a request reaches a revocable holder ('notify') and grants nobody: the waiter behind it waits until the holder releases", async () => {
    const rootPath = uniqueRoot('release-own');
    const [a, b, c] = await Promise.all([app(rootPath), app(rootPath), app(rootPath)]);
    const observer = await connect();
    const events: LockEvent[] = [];
    const subscription = a.events$.subscribe((event) => events.push(event));
    const holder = await a.acquire('job', { onReleaseRequest: 'notify' });
    expect(await childrenOf(observer, `${rootPath}/job`)).toEqual([expect.stringMatching(/^X-/)]);
    let waiterHolds = false;
    const waiter = b.acquire('job').then((lock) => ((waiterHolds = true), lock));
    await queueLength(observer, `${rootPath}/job`, 2);
    const requested = aborted(holder.releaseRequested);
    const result = await c.requestRelease('job');
    expect(result.requested).toEqual([expect.stringMatching(new RegExp(`^${rootPath}/job/X-`))]);
    expect(result.notAsked).toEqual([]);
    expect(await requested).toBeInstanceOf(LockReleaseRequestedError);
    // The write into the holder's node is no release: the waiter still waits, the holder still holds.
    await c.requestRelease('job'); // a second request changes nothing either
    expect(holder.isHeld()).toBe(true);
    expect(waiterHolds).toBe(false);
    expect(events.map((e) => e.type)).toContain('release-requested');
    await holder.release();
    await (await waiter).release();
    subscription.unsubscribe();
  });

  it("our layout: a plain holder is not asked (its node's write would grant the waiter); forceAfterMs deletes its node, and the waiter gets the lock", async () => {
    const rootPath = uniqueRoot('release-force');
    const [a, b, c] = await Promise.all([app(rootPath), app(rootPath), app(rootPath)]);
    const observer = await connect();
    const holder = await a.acquire('job');
    const waiter = b.acquire('job');
    await queueLength(observer, `${rootPath}/job`, 2);
    const result = await c.requestRelease('job', { forceAfterMs: 200 });
    expect(result.requested).toEqual([]);
    expect(result.notAsked).toHaveLength(1);
    expect(result.forced).toEqual(result.notAsked);
    const next = await waiter;
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(holder.fencingToken));
    await next.release();
    await holder.release().catch(() => undefined);
  });

  it("curator layout: 'release' takes the lock away at once (signal aborts, reason taken-away); a 'notify' holder that keeps it is forced after the grace period and told", async () => {
    const rootPath = uniqueRoot('release-curator');
    const zkPath = `${rootPath}-svc/lock`;
    const [a, b, c] = await Promise.all([app(rootPath, 'curator'), app(rootPath, 'curator'), app(rootPath, 'curator')]);
    const holder = await a.acquire('job', { zkPath, onReleaseRequest: 'release' });
    const waiter = b.acquire('job', { zkPath, onReleaseRequest: 'notify' });
    const observer = await connect();
    await queueLength(observer, zkPath, 2);
    const lost = aborted(holder.signal);
    await c.requestRelease({ zkPath, layout: 'curator' });
    const reason = await lost;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('taken-away');
    const second = await waiter;
    await expect(holder.release()).rejects.toBeInstanceOf(LockLostError);
    // The second holder only listens; forced after 100 ms, it is told it lost the lock.
    const secondLost = aborted(second.signal);
    const forced = await c.requestRelease({ zkPath, layout: 'curator' }, { forceAfterMs: 100 });
    expect(forced.forced).toEqual(forced.requested);
    expect(((await secondLost) as LockLostError).message).toMatch(/deleted by someone else \(a forced release request\)/);
    expect(await childrenOf(observer, zkPath)).toEqual([]);
    await expect(c.acquire('job', { zkPath, waitTimeoutMs: 0 }).then((l) => l.release())).resolves.toBeUndefined();
  });

  it('a downgraded holder is asked through its write and its read, in our layout and in the curator layout', async () => {
    for (const layout of ['nestjs-zk-lock', 'curator'] as const) {
      const rootPath = uniqueRoot(`release-downgrade-${layout}`);
      const [a, c] = await Promise.all([app(rootPath, layout === 'curator' ? 'curator' : undefined), app(rootPath)]);
      await runInNewLockContext(async () => {
        const write = await a.acquire('doc', { mode: 'write', onReleaseRequest: 'notify' });
        const read = await a.acquire('doc', { mode: 'read', waitTimeoutMs: 0 });
        const result = await c.requestRelease({ resource: 'doc', layout });
        expect(result.requested, `${layout}: ${JSON.stringify(result)}`).toHaveLength(2);
        expect(result.requested.some((node) => (layout === 'curator' ? /__WRIT__\d{10}$/ : /\/W-/).test(node))).toBe(true);
        await read.release();
        await write.release();
      });
    }
  });

  it('a downgraded read taken with onReleaseRequest hears a release request', async () => {
    const rootPath = uniqueRoot('release-downgrade-read');
    const [a, c] = await Promise.all([app(rootPath), app(rootPath)]);
    await runInNewLockContext(async () => {
      const write = await a.acquire('doc', { mode: 'write' });
      const read = await a.acquire('doc', { mode: 'read', waitTimeoutMs: 0, onReleaseRequest: 'notify' });
      await write.release(); // the read holds on alone
      const told = aborted(read.releaseRequested);
      const result = await c.requestRelease('doc');
      expect(result.requested).toHaveLength(1);
      expect(await told).toBeInstanceOf(LockReleaseRequestedError);
      expect(read.isHeld()).toBe(true); // 'notify': the holder decides
      await read.release();
    });
  });

  it('a holder that joins the context\'s lock asking for another onReleaseRequest is refused, saying where to set it', async () => {
    const rootPath = uniqueRoot('release-join');
    const a = await app(rootPath);
    await runInNewLockContext(async () => {
      const outer = await a.acquire('doc');
      await expect(a.acquire('doc', { onReleaseRequest: 'notify' })).rejects.toThrow(
        /holds it without onReleaseRequest.*give onReleaseRequest: 'notify' to the first acquire of the context/,
      );
      const plain = await a.acquire('doc'); // no wish of its own: joins as before
      await plain.release();
      await outer.release();
      const revocable = await a.acquire('doc', { onReleaseRequest: 'release' });
      await expect(a.acquire('doc', { onReleaseRequest: 'notify' })).rejects.toBeInstanceOf(IncompatibleLockError);
      const same = await a.acquire('doc', { onReleaseRequest: 'release' });
      expect(same.fencingToken).toBe(revocable.fencingToken);
      await same.release();
      await revocable.release();
    });
  });

  it("@DistributedLock({ onReleaseRequest: 'release' }): a request aborts the running method's lock signal and frees the lock for the next caller", async () => {
    const rootPath = uniqueRoot('release-decorator');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    @Injectable()
    class Job {
      constructor(readonly locks: LockService) {}
      @DistributedLock('nightly', { onReleaseRequest: 'release' })
      async run(): Promise<unknown> {
        const signal = this.locks.heldLock('nightly')!.signal;
        started();
        return aborted(signal);
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, rootPath, ...STEADY_SESSION })],
      providers: [Job],
    }).compile();
    const application = moduleRef.createNestApplication({ logger: false });
    await application.init();
    closers.push(() => application.close());
    const other = await app(rootPath);
    const run = application.get(Job).run();
    await running;
    await expect(other.acquire('nightly', { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await other.requestRelease('nightly');
    expect(((await run) as LockLostError).reason).toBe('taken-away');
    const next = await other.acquire('nightly', { waitTimeoutMs: 2000 });
    await next.release();
  });
});

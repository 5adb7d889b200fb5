/**
 * This library's `curator` and `kazoo` layouts against the real Apache Curator (5.4) and kazoo (2.8):
 * mixed workers on one lock path (no lost update, no overlap), first come first served across
 * languages, Curator's read/write lock, both semaphores, and revocation both ways.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { IncompatibleLockError, type LockService, LockReleaseRequestedError, LockTimeoutError } from '../../lib/index.js';
import { ZkNodeExistsError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';
import { usePeer } from '../support/peers.js';

describe("our curator and kazoo layouts with the real Curator and kazoo on one lock path", () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const curator = usePeer('curator');
  const kazoo = usePeer('kazoo');
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  const javaWorker = (name: string) => curator.peer.worker(name, zk.connectString);
  const pythonWorker = (name: string) => kazoo.peer.worker(name, zk.connectString);
  const ours = async (layout: 'curator' | 'kazoo'): Promise<LockService> => {
    const started = await startLockApp(zk, { ...STEADY_SESSION, layout, rootPath: uniqueRoot('unused') });
    closers.push(() => started.application.close());
    return started.locks;
  };

  /**
   * A fresh root with `lock` (persistent: kazoo 2.8 can fail when Curator's empty container is reaped
   * under it, see peers-facts) and `counter` = 0.
   */
  async function sharedRoot(name: string): Promise<{ root: string; lock: string; counter: string; inside: string; connection: ZkConnection }> {
    const root = uniqueRoot(name);
    const connection = await connect();
    const session = await connection.session();
    await session.create(root, '', 'PERSISTENT');
    await session.create(`${root}/lock`, '', 'PERSISTENT');
    await session.create(`${root}/counter`, '0', 'PERSISTENT');
    return { root, lock: `${root}/lock`, counter: `${root}/counter`, inside: `${root}/inside`, connection };
  }

  /** The peers' increment loop, done by one of our services: returns how often it found someone inside. */
  async function ourIncrements(locks: LockService, layout: 'curator' | 'kazoo', paths: Awaited<ReturnType<typeof sharedRoot>>, times: number): Promise<number> {
    const session = await paths.connection.session();
    let overlaps = 0;
    for (let i = 0; i < times; i += 1) {
      await locks.withLock(
        'counter',
        async () => {
          try {
            await session.create(paths.inside, '', 'EPHEMERAL');
          } catch (error) {
            if (!(error instanceof ZkNodeExistsError)) throw error;
            overlaps += 1;
          }
          const { data } = await session.getData(paths.counter);
          await new Promise((resolve) => setTimeout(resolve, 2));
          await session.setData(paths.counter, Buffer.from(String(Number(data.toString()) + 1)));
          await session.delete(paths.inside).catch(() => undefined);
        },
        { layout, zkPath: paths.lock },
      );
    }
    return overlaps;
  }

  async function counterOf(paths: Awaited<ReturnType<typeof sharedRoot>>): Promise<number> {
    const { data } = await (await paths.connection.session()).getData(paths.counter);
    return Number(data.toString());
  }

  it('curator layout + Curator InterProcessMutex + kazoo nodes named the Curator way: a shared counter loses no update, nobody overlaps', async () => {
    const paths = await sharedRoot('mix-curator');
    const [j1, j2, p1, p2, a, b] = await Promise.all([
      javaWorker('j1'),
      javaWorker('j2'),
      pythonWorker('p1'),
      pythonWorker('p2'),
      ours('curator'),
      ours('curator'),
    ]);
    const times = 10;
    const counts = await Promise.all([
      ...[j1, j2].map((w) => w.increment('mutex', { lock: paths.lock, counter: paths.counter, inside: paths.inside }, times)),
      ...[p1, p2].map((w) => w.increment('curator-lock', { lock: paths.lock, counter: paths.counter, inside: paths.inside }, times)),
      ...[a, b].map((locks) => ourIncrements(locks, 'curator', paths, times).then((overlaps) => ({ overlaps }))),
    ]);
    expect(counts.map((c) => c.overlaps)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await counterOf(paths)).toBe(6 * times);
  });

  it("kazoo layout + kazoo's own Lock: a shared counter loses no update, nobody overlaps", async () => {
    const paths = await sharedRoot('mix-kazoo');
    const [p1, p2, a, b] = await Promise.all([pythonWorker('p1'), pythonWorker('p2'), ours('kazoo'), ours('kazoo')]);
    const times = 10;
    const counts = await Promise.all([
      ...[p1, p2].map((w) => w.increment('lock', { lock: paths.lock, counter: paths.counter, inside: paths.inside }, times)),
      ...[a, b].map((locks) => ourIncrements(locks, 'kazoo', paths, times).then((overlaps) => ({ overlaps }))),
    ]);
    expect(counts.map((c) => c.overlaps)).toEqual([0, 0, 0, 0]);
    expect(await counterOf(paths)).toBe(4 * times);
  });

  it('first come, first served across languages: Curator, ours and kazoo queued one by one are granted in that order', async () => {
    const paths = await sharedRoot('fifo');
    const [j1, p1, a, b] = await Promise.all([javaWorker('j1'), pythonWorker('p1'), ours('curator'), ours('curator')]);
    const holder = await a.acquire('x', { zkPath: paths.lock });
    const grants: string[] = [];
    const queueOf = (n: number) => eventually(async () => (await childrenOf(paths.connection, paths.lock)).length === n, { what: `${n} nodes` });
    const java = j1.startAcquire('mutex', paths.lock);
    await java.queued;
    const ourB = b.acquire('x', { zkPath: paths.lock }).then((lock) => (grants.push('ours'), lock));
    await queueOf(3);
    const python = p1.startAcquire('curator-lock', paths.lock);
    await python.queued;
    void java.outcome.then(() => grants.push('curator'));
    void python.outcome.then(() => grants.push('kazoo'));

    await holder.release();
    await java.outcome;
    expect(grants).toEqual(['curator']);
    await j1.release();
    const lockB = await ourB;
    expect(grants).toEqual(['curator', 'ours']);
    expect(python.decided).toBeUndefined();
    await lockB.release();
    await python.outcome;
    expect(grants).toEqual(['curator', 'ours', 'kazoo']);
    await p1.release();
  });

  it("curator layout read/write with Curator's InterProcessReadWriteLock: readers share across languages, a queued Curator writer holds back later readers and excludes ours", async () => {
    const paths = await sharedRoot('rw');
    const [jr, jw, a, b] = await Promise.all([javaWorker('jr'), javaWorker('jw'), ours('curator'), ours('curator')]);
    await jr.acquire('read', paths.lock);
    const ourRead = await a.acquire('doc', { zkPath: paths.lock, mode: 'read', waitTimeoutMs: 0 });
    const writer = jw.startAcquire('write', paths.lock);
    await writer.queued;
    await expect(b.acquire('doc', { zkPath: paths.lock, mode: 'read', waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await jr.release();
    expect(writer.decided).toBeUndefined();
    await ourRead.release();
    expect((await writer.outcome).acquired).toBe(true);
    const ourWrite = b.acquire('doc', { zkPath: paths.lock, mode: 'write' });
    await eventually(async () => (await childrenOf(paths.connection, paths.lock)).length === 2, { what: 'our writer queued' });
    await jw.release();
    await (await ourWrite).release();
  });

  it("semaphores: ours with InterProcessSemaphoreV2 (curator) and with kazoo's Semaphore share the leases; a different max_leases is refused", async () => {
    for (const layout of ['curator', 'kazoo'] as const) {
      const paths = await sharedRoot(`sem-${layout}`);
      const pool = `${paths.root}/pool`;
      const peer = layout === 'curator' ? await javaWorker(`j-${layout}`) : await pythonWorker(`p-${layout}`);
      const second = layout === 'curator' ? await javaWorker(`j2-${layout}`) : await pythonWorker(`p2-${layout}`);
      const [a, b] = await Promise.all([ours(layout), ours(layout)]);
      await peer.acquire('semaphore', pool, 'leases=2');
      const lease = await a.acquire('pool', { zkPath: pool, permits: 2 });
      expect(await b.tryAcquire('pool', { zkPath: pool, permits: 2 })).toBeNull();
      const waiting = second.startAcquire('semaphore', pool, 'leases=2');
      await waiting.queued.catch(() => undefined); // kazoo's lease is plain EPHEMERAL: no QUEUED before the grant
      expect(waiting.decided).toBeUndefined();
      await lease.release();
      expect((await waiting.outcome).acquired).toBe(true);
      if (layout === 'kazoo') {
        await expect(b.acquire('pool', { zkPath: pool, permits: 3 })).rejects.toBeInstanceOf(IncompatibleLockError);
      }
      await Promise.all([peer.release(), second.release()]);
    }
  });

  it("revocation both ways: requestRelease reaches a revocable Curator holder; Curator's Revoker reaches ours; a forced request frees a Curator holder's lock", async () => {
    const paths = await sharedRoot('revoke');
    const [j1, j2, a, b] = await Promise.all([javaWorker('j1'), javaWorker('j2'), ours('curator'), ours('curator')]);
    // Ours -> Curator (makeRevocable, reporting).
    const node = await j1.acquire('mutex', paths.lock, 'revocable=report');
    const heard = j1.reply('REVOKE-REQUESTED');
    const result = await a.requestRelease({ zkPath: paths.lock, layout: 'curator' });
    expect(result.requested).toEqual([node]);
    await heard;
    await j1.release();
    // Curator's Revoker.attemptRevoke -> ours.
    const ourLock = await a.acquire('x', { zkPath: paths.lock, onReleaseRequest: 'notify' });
    const requested = new Promise((resolve) => ourLock.releaseRequested.addEventListener('abort', () => resolve(ourLock.releaseRequested.reason), { once: true }));
    const [ourNode] = await childrenOf(paths.connection, paths.lock);
    await j2.revoke(`${paths.lock}/${ourNode}`);
    expect(await requested).toBeInstanceOf(LockReleaseRequestedError);
    await ourLock.release();
    // Forced: a Curator holder that is not revocable loses its node; the next waiter gets the lock.
    await j1.acquire('mutex', paths.lock);
    const next = j2.startAcquire('mutex', paths.lock);
    await next.queued;
    const forced = await b.requestRelease({ zkPath: paths.lock, layout: 'curator' }, { forceAfterMs: 100 });
    expect(forced.forced).toHaveLength(1);
    expect((await next.outcome).acquired).toBe(true);
    await j2.release();
  });
});

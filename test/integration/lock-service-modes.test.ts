import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import {
  IncompatibleLockError,
  InvalidOptionsError,
  LockService,
  LockTimeoutError,
  LockUpgradeError,
} from '../../lib/index.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import { childrenOf, eventually, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';

describe('LockService modes, semaphores, several resources and inspect, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  // Nothing here is about sessions ending: a lease a busy machine cannot run out (see STEADY_SESSION).
  const service = (rootPath: string) => startLockApp(zk, { rootPath, ...STEADY_SESSION });
  /** Runs `fn` as one request would: in a lock context of its own. */
  const inContext = <T>(fn: () => Promise<T>, owner = 'test'): Promise<T> => runInNewLockContext(fn, () => owner);

  it('downgrades: holding the write, a read is granted at once; after the write goes the read stays, and a queued writer keeps waiting for it', async () => {
    const rootPath = uniqueRoot('downgrade');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const observer = await connect();
    const path = `${rootPath}/doc`;
    let releaseRead!: () => Promise<void>;
    const readHeld = new Promise<void>((ready) => {
      void inContext(async () => {
        const write = await one.locks.acquire('doc', { mode: 'write' });
        const read = await one.locks.acquire('doc', { mode: 'read', waitTimeoutMs: 0 });
        expect(read.isHeld()).toBe(true);
        await write.release();
        expect(read.isHeld()).toBe(true);
        releaseRead = () => read.release();
        ready();
      });
    });
    await readHeld;
    // Another application's writer queues behind the downgraded read; its readers get in beside it.
    let writerHolds = false;
    const writer = two.locks.acquire('doc', { mode: 'write' }).then((lock) => {
      writerHolds = true;
      return lock;
    });
    await queueLength(observer, path, 2);
    const reader = await two.locks.acquire('doc', { mode: 'read', waitTimeoutMs: 0 }).catch((e: unknown) => e);
    // The reader came after the queued writer: first come, first served, so it waits.
    expect(reader).toBeInstanceOf(LockTimeoutError);
    expect(writerHolds).toBe(false);
    await releaseRead();
    const w = await writer;
    await w.release();
    expect(await childrenOf(observer, path)).toEqual([]);
    await one.application.close();
    await two.application.close();
  });

  it('keeps a writer that queued before the downgrade waiting until the downgraded read is released', async () => {
    const rootPath = uniqueRoot('downgradequeued');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const observer = await connect();
    await inContext(async () => {
      const write = await one.locks.acquire('doc', { mode: 'write' });
      let writerHolds = false;
      const writer = two.locks.acquire('doc', { mode: 'write' }).then((lock) => {
        writerHolds = true;
        return lock;
      });
      await queueLength(observer, `${rootPath}/doc`, 2);
      const read = await one.locks.acquire('doc', { mode: 'read', waitTimeoutMs: 0 });
      await write.release();
      // The other writer is now at the head of the queue, yet the downgraded read keeps it out.
      await queueLength(observer, `${rootPath}/doc`, 2);
      await expect(two.locks.acquire('doc', { mode: 'read', waitTimeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      expect(writerHolds).toBe(false);
      await read.release();
      await (await writer).release();
    });
    expect(await childrenOf(observer, `${rootPath}/doc`)).toEqual([]);
    await one.application.close();
    await two.application.close();
  });

  it('inside one context, a read asked while the write is still awaited becomes a downgrade, and a write asked while the read is awaited fails at once', async () => {
    const rootPath = uniqueRoot('pendingmodes');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const blocker = await two.locks.acquire('doc', { mode: 'write' });
    await inContext(async () => {
      const both = Promise.all([one.locks.acquire('doc', { mode: 'write' }), one.locks.acquire('doc', { mode: 'read', waitTimeoutMs: 60_000 })]);
      await new Promise((r) => setTimeout(r, 100));
      await blocker.release();
      const [write, read] = await both;
      expect(read.isHeld() && write.isHeld()).toBe(true);
      await read.release();
      await write.release();
    });
    const blocker2 = await two.locks.acquire('doc', { mode: 'write' });
    await inContext(async () => {
      const read = one.locks.acquire('doc', { mode: 'read' });
      await new Promise((r) => setTimeout(r, 50));
      await expect(one.locks.acquire('doc', { mode: 'write' })).rejects.toBeInstanceOf(LockUpgradeError);
      await blocker2.release();
      await (await read).release();
    });
    await one.application.close();
    await two.application.close();
  });

  it('shares a pending acquire in one context only within each caller\'s own timeout, and not across permits', async () => {
    const rootPath = uniqueRoot('sharedwait');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const blocker = await two.locks.acquire('doc');
    const pool = await two.locks.semaphore('pool', { permits: 1 });
    await inContext(async () => {
      const patient = one.locks.acquire('doc');
      await expect(one.locks.acquire('doc', { waitTimeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
      await expect(one.locks.acquire('doc', { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError); // not free now: no wait
      expect(await one.locks.tryAcquire('doc')).toBeNull();
      const lease = one.locks.semaphore('pool', { permits: 1 });
      await expect(one.locks.semaphore('pool', { permits: 2 })).rejects.toBeInstanceOf(IncompatibleLockError);
      await blocker.release();
      await pool.release();
      await (await patient).release();
      await (await lease).release();
    });
    await one.application.close();
    await two.application.close();
  });

  it('lets readers share with a downgraded read that was taken before them', async () => {
    const rootPath = uniqueRoot('downgradeshare');
    const one = await service(rootPath);
    const two = await service(rootPath);
    await inContext(async () => {
      const write = await one.locks.acquire('doc', { mode: 'write' });
      const read = await one.locks.acquire('doc', { mode: 'read' });
      const otherReader = two.locks.acquire('doc', { mode: 'read' });
      await write.release();
      const other = await otherReader; // granted while our downgraded read is still held
      expect(read.isHeld()).toBe(true);
      await other.release();
      await read.release();
    });
    await one.application.close();
    await two.application.close();
  });

  it('refuses at once to upgrade a read to a write in one context, creating nothing', async () => {
    const rootPath = uniqueRoot('upgrade');
    const one = await service(rootPath);
    const observer = await connect();
    await inContext(async () => {
      const read = await one.locks.acquire('doc', { mode: 'read' });
      await expect(one.locks.acquire('doc', { mode: 'write' })).rejects.toBeInstanceOf(LockUpgradeError);
      await expect(one.locks.acquire('doc')).rejects.toThrow(/holds its read lock/);
      expect(await childrenOf(observer, `${rootPath}/doc`)).toHaveLength(1);
      await read.release();
    });
    await one.application.close();
  });

  it('treats exclusive and write as one lock inside a context, and excludes them from each other across contexts', async () => {
    const rootPath = uniqueRoot('exwrite');
    const one = await service(rootPath);
    await inContext(async () => {
      const exclusive = await one.locks.acquire('doc');
      const write = await one.locks.acquire('doc', { mode: 'write', waitTimeoutMs: 0 });
      expect(write.fencingToken).toBe(exclusive.fencingToken);
      await inContext(async () => {
        await expect(one.locks.acquire('doc', { mode: 'write', waitTimeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
      });
      await write.release();
      await exclusive.release();
    });
    await one.application.close();
  });

  it('takes several resources with their own modes in one order, so opposite requests never deadlock', async () => {
    const rootPath = uniqueRoot('multi');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const rounds = async (locks: LockService, targets: Parameters<LockService['acquireAll']>[0]) => {
      for (let i = 0; i < 15; i++) {
        await inContext(async () => {
          const handles = await locks.acquireAll(targets, { waitTimeoutMs: 20_000 });
          await Promise.all(handles.map((h) => h.release()));
        });
      }
    };
    await Promise.all([
      rounds(one.locks, ['b', { resource: 'a', mode: 'read' }, 'c']),
      rounds(two.locks, ['c', 'a', { resource: 'b', mode: 'write' }]),
    ]);
    const observer = await connect();
    for (const name of ['a', 'b', 'c']) expect(await childrenOf(observer, `${rootPath}/${name}`)).toEqual([]);
    await expect(one.locks.acquireAll(['a', { resource: 'a', mode: 'read' }])).rejects.toBeInstanceOf(InvalidOptionsError);
    await one.application.close();
    await two.application.close();
  });

  it('gives semaphore leases through the service, shared within a context and checked for their permits', async () => {
    const rootPath = uniqueRoot('svcsem');
    const one = await service(rootPath);
    const two = await service(rootPath);
    await inContext(async () => {
      const lease = await one.locks.semaphore('pool', { permits: 2 });
      const again = await one.locks.acquire('pool', { permits: 2, waitTimeoutMs: 0 });
      expect(again.fencingToken).toBe(lease.fencingToken);
      await expect(one.locks.semaphore('pool', { permits: 3 })).rejects.toBeInstanceOf(IncompatibleLockError);
      // Other contexts (other requests) each need a permit of their own: one left, then none.
      const second = await inContext(() => two.locks.semaphore('pool', { permits: 2, waitTimeoutMs: 0 }));
      await expect(inContext(() => two.locks.semaphore('pool', { permits: 2, waitTimeoutMs: 0 }))).rejects.toBeInstanceOf(LockTimeoutError);
      await second.release();
      await again.release();
      await lease.release();
    });
    await one.application.close();
    await two.application.close();
  });

  it('inspect shows the holders and the waiters in order, with host, pid and owner', async () => {
    const rootPath = uniqueRoot('inspect');
    const one = await service(rootPath);
    const two = await service(rootPath);
    const observer = await connect();
    expect(await one.locks.inspect('doc')).toMatchObject({ recipe: 'none', holders: [], waiters: [] });
    const r1 = await inContext(() => one.locks.acquire('doc', { mode: 'read' }), 'GET /doc (DocController.read)');
    const r2 = await two.locks.acquire('doc', { mode: 'read', owner: 'report job' });
    const writer = inContext(() => two.locks.acquire('doc', { mode: 'write' }), 'PUT /doc (DocController.write)');
    await queueLength(observer, `${rootPath}/doc`, 3);
    const view = await one.locks.inspect('doc');
    expect(view.recipe).toBe('queue');
    expect(view.holders.map((h) => [h.mode, (h.data as { owner?: string }).owner])).toEqual([
      ['read', 'GET /doc (DocController.read)'],
      ['read', 'report job'],
    ]);
    expect(view.waiters).toHaveLength(1);
    expect(view.waiters[0]).toMatchObject({ mode: 'write', data: { pid: process.pid, owner: 'PUT /doc (DocController.write)' } });
    expect(view.waiters[0]!.createdAt).toBeInstanceOf(Date);
    await r1.release();
    await r2.release();
    await (await writer).release();
    const simple = await one.locks.acquire('job', { mode: 'simple', owner: 'nightly' });
    expect(await one.locks.inspect('job')).toMatchObject({ recipe: 'simple', holders: [{ mode: 'simple', data: { owner: 'nightly' } }], waiters: [] });
    await simple.release();
    await eventually(async () => (await one.locks.inspect('job')).recipe === 'none');
    await one.application.close();
    await two.application.close();
  });

  it('refuses bad modes, permits and owners with a clear error before touching ZooKeeper', async () => {
    const one = await service(uniqueRoot('badkind'));
    await expect(one.locks.acquire('x', { mode: 'shared' as never })).rejects.toThrow(/mode.*'exclusive', 'read', 'write' or 'simple'/);
    await expect(one.locks.acquire('x', { permits: 0 })).rejects.toThrow(/permits.*whole number/);
    await expect(one.locks.acquire('x', { permits: 2, mode: 'read' })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(one.locks.acquire('x', { owner: 'o'.repeat(600) })).rejects.toThrow(/owner.*512/);
    await one.application.close();
  });
});

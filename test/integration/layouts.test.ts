import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { IncompatibleLockError, InvalidOptionsError, InvalidResourceNameError, LockTimeoutError, type LockHandle } from '../../lib/index.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import { childrenOf, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, exists } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';

/**
 * The Curator and kazoo layouts among this library's own clients: node names as those clients make
 * them, exclusion and order by their rules, a zkPath outside rootPath, and the refusals (another
 * layout's nodes on the path, kinds a layout lacks, two kinds of one lock in one context). The peers
 * themselves are in test/peers.
 */
describe('lock layouts (curator, kazoo) and zkPath, among our own clients on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const apps: { application: { close(): Promise<void> } }[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((started) => started.application.close()));
  });
  const app = async (rootPath: string, layout?: 'curator' | 'kazoo') => {
    const started = await startLockApp(zk, { ...STEADY_SESSION, rootPath, cohort: false, ...(layout ? { layout } : {}) });
    apps.push(started);
    return started;
  };
  const inContext = <T>(fn: () => Promise<T>): Promise<T> => runInNewLockContext(fn, () => 'test');

  const CURATOR_MUTEX = /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/;
  const CURATOR_WRITE = /^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/;
  const CURATOR_READ = /^_c_[0-9a-f-]{36}-__READ__\d{10}$/;
  const KAZOO_LOCK = /^[0-9a-f]{32}__lock__\d{10}$/;
  const KAZOO_READ = /^[0-9a-f]{32}__rlock__\d{10}$/;

  /** Holds `n` of `takes` in order, each queued after the previous one's node shows: returns the grant order. */
  async function grantOrder(path: string, takes: (() => Promise<LockHandle>)[]): Promise<number[]> {
    const observer = await connect();
    const order: number[] = [];
    const held: Promise<LockHandle>[] = [];
    for (const [i, take] of takes.entries()) {
      held.push(take().then((lock) => (order.push(i), lock)));
      await queueLength(observer, path, i + 1);
    }
    for (const lock of held) await (await lock).release();
    return order;
  }

  it("curator layout: nodes named as Curator's InterProcessMutex under the exact zkPath, containers above it, one holder at a time, first come first served", async () => {
    const rootPath = uniqueRoot('layout-curator');
    const zkPath = `${uniqueRoot('curator-svc')}/billing/lock`;
    const [a, b] = await Promise.all([app(rootPath, 'curator'), app(rootPath, 'curator')]);
    const observer = await connect();
    const first = await a.locks.acquire('invoice', { zkPath });
    const [node] = await childrenOf(observer, zkPath);
    expect(node).toMatch(CURATOR_MUTEX);
    expect(first.fencingToken).toMatch(/^\d{40}$/);
    // Nothing under rootPath: the lock lives at its zkPath only.
    expect(await exists(observer, `${rootPath}/invoice`)).toBe(false);
    expect(await b.locks.tryAcquire('invoice', { zkPath })).toBeNull();
    await first.release();
    const order = await grantOrder(zkPath, [0, 1, 2].map((i) => () => (i % 2 ? b : a).locks.acquire('invoice', { zkPath })));
    expect(order).toEqual([0, 1, 2]);
    // Curator creates every missing ancestor as a container: ZooKeeper reaps them once empty (not checked here: the reaper runs once a minute).
  });

  it("curator layout: the read/write lock's __READ__ and __WRIT__ nodes; readers share, a writer is alone, a queued writer is not overtaken", async () => {
    const rootPath = uniqueRoot('layout-curator-rw');
    const zkPath = `${rootPath}-svc/doc`;
    const [a, b] = await Promise.all([app(rootPath, 'curator'), app(rootPath, 'curator')]);
    const observer = await connect();
    const r1 = await a.locks.acquire('doc', { zkPath, mode: 'read' });
    const r2 = await b.locks.acquire('doc', { zkPath, mode: 'read', waitTimeoutMs: 0 });
    let writerHolds = false;
    const writer = a.locks.acquire('doc', { zkPath, mode: 'write' }).then((lock) => ((writerHolds = true), lock));
    await queueLength(observer, zkPath, 3);
    const names = await childrenOf(observer, zkPath);
    expect(names.filter((n) => CURATOR_READ.test(n))).toHaveLength(2);
    expect(names.filter((n) => CURATOR_WRITE.test(n))).toHaveLength(1);
    // A reader after the queued writer waits.
    await expect(b.locks.acquire('doc', { zkPath, mode: 'read', waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await r1.release();
    expect(writerHolds).toBe(false);
    await r2.release();
    const w = await writer;
    await expect(b.locks.acquire('doc', { zkPath, mode: 'read', waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await w.release();
  });

  it("curator layout: a read under the context's own write is a downgrade, as Curator 5.5 makes it (at the write's place): a writer queued behind waits for it after the write goes", async () => {
    const rootPath = uniqueRoot('layout-curator-down');
    const zkPath = `${rootPath}-svc/doc`;
    const [a, b] = await Promise.all([app(rootPath, 'curator'), app(rootPath, 'curator')]);
    const observer = await connect();
    let releaseRead!: () => Promise<void>;
    const ready = new Promise<void>((resolve) => {
      void inContext(async () => {
        const write = await a.locks.acquire('doc', { zkPath, mode: 'write' });
        const read = await a.locks.acquire('doc', { zkPath, mode: 'read', waitTimeoutMs: 0 });
        const names = await childrenOf(observer, zkPath);
        const writeSeq = names.find((n) => CURATOR_WRITE.test(n))!.slice(-10);
        expect(names.find((n) => n.includes('__READ__'))).toMatch(new RegExp(`^_c_[0-9a-f-]{36}-__READ__${writeSeq}$`));
        expect(read.fencingToken).toBe(write.fencingToken);
        const again = await a.locks.acquire('doc', { zkPath, mode: 'write', waitTimeoutMs: 0 }); // reentrant on the held write
        await again.release();
        await write.release();
        releaseRead = () => read.release();
        resolve();
      });
    });
    await ready;
    let writerHolds = false;
    const writer = b.locks.acquire('doc', { zkPath, mode: 'write' }).then((lock) => ((writerHolds = true), lock));
    await queueLength(observer, zkPath, 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(writerHolds).toBe(false);
    await releaseRead();
    await (await writer).release();
  });

  it("kazoo layout: <hex>__lock__<seq> and __rlock__ nodes; a Lock ignores readers as kazoo's does, a WriteLock waits for them", async () => {
    const rootPath = uniqueRoot('layout-kazoo');
    const zkPath = `${rootPath}-svc/report`;
    const [a, b] = await Promise.all([app(rootPath, 'kazoo'), app(rootPath, 'kazoo')]);
    const observer = await connect();
    const read = await a.locks.acquire('report', { zkPath, mode: 'read' });
    expect(await childrenOf(observer, zkPath)).toEqual([expect.stringMatching(KAZOO_READ)]);
    // kazoo's Lock does not see __rlock__ nodes: it holds beside the reader.
    const plain = await b.locks.acquire('report', { zkPath, waitTimeoutMs: 0 });
    expect((await childrenOf(observer, zkPath)).filter((n) => KAZOO_LOCK.test(n))).toHaveLength(1);
    // A WriteLock sees both, and waits.
    await expect(b.locks.acquire('report', { zkPath, mode: 'write', waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await plain.release();
    await expect(a.locks.acquire('other', { zkPath, mode: 'write', waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await read.release();
    const order = await grantOrder(zkPath, [0, 1, 2].map((i) => () => (i % 2 ? b : a).locks.acquire('report', { zkPath, mode: 'write' })));
    expect(order).toEqual([0, 1, 2]);
  });

  it('a path holding another layout\'s nodes is refused by every layout, naming the clients that made them and what to set', async () => {
    const rootPath = uniqueRoot('layout-mixed');
    const [own, curator, kazoo] = await Promise.all([app(rootPath), app(rootPath, 'curator'), app(rootPath, 'kazoo')]);
    const held = await own.locks.acquire('shared');
    const path = `${rootPath}/shared`;
    for (const other of [curator, kazoo]) {
      const error = await other.locks.acquire('shared', { waitTimeoutMs: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IncompatibleLockError);
      expect((error as Error).message).toContain("this library's own layout (layout: 'nestjs-zk-lock')");
    }
    await held.release();
    const curatorHeld = await curator.locks.acquire('shared');
    const error = await own.locks.acquire('shared', { waitTimeoutMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IncompatibleLockError);
    expect((error as Error).message).toContain("Curator's InterProcessMutex (layout: 'curator', mode 'exclusive')");
    // Curator's mutex and read/write lock do not exclude each other either: refused.
    const rw = await curator.locks.acquire('shared', { mode: 'write', waitTimeoutMs: 0 }).catch((e: unknown) => e);
    expect(rw).toBeInstanceOf(IncompatibleLockError);
    expect((rw as Error).message).toContain('InterProcessMutex');
    await curatorHeld.release();
    // Nothing was left behind by the refused acquires.
    const observer = await connect();
    expect(await childrenOf(observer, path).catch(() => [])).toEqual([]);
  });

  it('refuses what a layout lacks, a bad zkPath, and two kinds of one foreign lock in one context, with errors that say what to do', async () => {
    const rootPath = uniqueRoot('layout-refusals');
    const kazoo = await app(rootPath, 'kazoo');
    const zkPath = `${rootPath}-svc/job`;
    await expect(kazoo.locks.acquire('job', { zkPath, mode: 'simple' })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(kazoo.locks.acquire('job', { layout: 'zookeeper' as never })).rejects.toThrow(/"layout": must be 'nestjs-zk-lock' \(the default\), 'curator' or 'kazoo'/);
    for (const bad of ['relative/path', '/a/../b', '/a//b', '/a/', '/', '/zookeeper/quota', '/a\u0000b', `/${'x'.repeat(1100)}`]) {
      const error = await kazoo.locks.acquire('job', { zkPath: bad }).catch((e: unknown) => e);
      expect(error, bad).toBeInstanceOf(InvalidResourceNameError);
      expect((error as Error).message, bad).toMatch(/zkPath/);
    }
    await expect(kazoo.locks.acquireAll(['a', 'b'], { zkPath })).rejects.toBeInstanceOf(InvalidOptionsError);
    await inContext(async () => {
      const lock = await kazoo.locks.acquire('job', { zkPath });
      // The same kind again is reentrant...
      const again = await kazoo.locks.acquire('job', { zkPath, waitTimeoutMs: 0 });
      expect(again.fencingToken).toBe(lock.fencingToken);
      expect(kazoo.locks.heldLock('job', { zkPath })?.fencingToken).toBe(lock.fencingToken);
      expect(kazoo.locks.heldLock('job')?.fencingToken).toBe(lock.fencingToken); // found by its label too
      expect(kazoo.locks.heldLock('other')).toBeUndefined();
      // ...another kind would wait for this very context in kazoo (its WriteLock and ReadLock wait for a Lock): refused.
      await expect(kazoo.locks.acquire('job', { zkPath, mode: 'write' })).rejects.toThrow(/one context takes one kind of a lock at a time/);
      await expect(kazoo.locks.acquire('job', { zkPath, mode: 'read' })).rejects.toBeInstanceOf(IncompatibleLockError);
      await again.release();
      await lock.release();
    });
    const observer = await connect();
    expect(await childrenOf(observer, zkPath)).toEqual([]);
  });

  it('heldLock(label, { zkPath }) finds a semaphore lease taken at a zkPath in either layout (Curator keeps its leases in <zkPath>/leases)', async () => {
    const rootPath = uniqueRoot('layout-held-sem');
    const { locks } = await app(rootPath);
    for (const layout of ['curator', 'kazoo'] as const) {
      const zkPath = `${rootPath}-svc/pool-${layout}`;
      await inContext(async () => {
        const lease = await locks.acquire('pool', { zkPath, permits: 2, layout });
        expect(locks.heldLock('pool', { zkPath })?.fencingToken, layout).toBe(lease.fencingToken);
        expect(locks.heldLock('pool', { zkPath: `${zkPath}-other` }), layout).toBeUndefined();
        await lease.release();
      });
    }
  });

  for (const layout of ['curator', 'kazoo'] as const) {
    it(`${layout} layout semaphore: at most \`permits\` leases in the ${layout === 'curator' ? "InterProcessSemaphoreV2's leases/" : "kazoo Semaphore's"} pool, the next waiter in when one goes, nothing left after`, async () => {
      const rootPath = uniqueRoot(`layout-sem-${layout}`);
      const zkPath = `${rootPath}-svc/pool`;
      const [a, b] = await Promise.all([app(rootPath, layout), app(rootPath, layout)]);
      const observer = await connect();
      const leases = layout === 'curator' ? `${zkPath}/leases` : zkPath;
      const one = await a.locks.acquire('pool', { zkPath, permits: 2 });
      const two = await b.locks.acquire('pool', { zkPath, permits: 2 });
      expect(BigInt(two.fencingToken)).toBeGreaterThan(BigInt(one.fencingToken));
      const names = await childrenOf(observer, leases);
      expect(names).toHaveLength(2);
      for (const name of names) expect(name).toMatch(layout === 'curator' ? /^_c_[0-9a-f-]{36}-lease-\d{10}$/ : /^[0-9a-f]{32}$/);
      expect(await b.locks.tryAcquire('pool', { zkPath, permits: 2 })).toBeNull();
      let third = false;
      const waiting = a.locks.acquire('pool', { zkPath, permits: 2 }).then((lock) => ((third = true), lock));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(third).toBe(false);
      await one.release();
      const three = await waiting;
      expect(BigInt(three.fencingToken)).toBeGreaterThan(BigInt(two.fencingToken));
      await expect(b.locks.acquire('pool', { zkPath, permits: 2, waitTimeoutMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
      if (layout === 'kazoo') {
        await expect(b.locks.acquire('pool', { zkPath, permits: 3 })).rejects.toThrow(/allows 2 leases \(max_leases/);
      }
      await expect(b.locks.requestRelease({ zkPath, layout })).rejects.toThrow(/lease pool .*release requests are for locks/);
      await two.release();
      await three.release();
      expect(await childrenOf(observer, leases)).toEqual([]);
      expect(await childrenOf(observer, layout === 'curator' ? `${zkPath}/locks` : `${zkPath}-__lock__`)).toEqual([]);
    });
  }

  it('a downgrade queues in its write\'s own queue without checking it as a zkPath: a long encoded name still downgrades', async () => {
    const own = await app(uniqueRoot('layout-long'));
    const resource = 'é'.repeat(250); // 500 UTF-8 bytes: encoded, a path of about 1,500 characters
    await inContext(async () => {
      const write = await own.locks.acquire(resource, { mode: 'write' });
      // Granted at once (a read queued behind the write would time out at 0 ms), and still held
      // after the write goes: a downgrade.
      const read = await own.locks.acquire(resource, { mode: 'read', waitTimeoutMs: 0 });
      await write.release();
      expect(read.isHeld()).toBe(true);
      await read.release();
    });
  });

  it('acquireAll orders locks by their ZooKeeper paths, however they are named; a zkPath under rootPath is refused', async () => {
    const rootPath = uniqueRoot('layout-order');
    const own = await app(rootPath);
    const observer = await connect();
    const handles = await own.locks.acquireAll(['b', { resource: 'a-label', zkPath: `${rootPath}~/c` }, 'a']);
    expect(handles.map((h) => h.resource)).toEqual(['a', 'b', 'a-label']);
    expect(await childrenOf(observer, `${rootPath}~/c`)).toHaveLength(1);
    // A zkPath at or under rootPath would be a second name for a lock named by resource: refused.
    await expect(own.locks.acquire('a', { zkPath: `${rootPath}/a` })).rejects.toThrow(/zkPath is at or under rootPath/);
    for (const handle of handles.reverse()) await handle.release();
  });
});

import { describe, expect, it } from 'vitest';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { ageOf, inspectAll, resourceOf } from '../../lib/recipes/inspect-all.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { QueueLock } from '../../lib/recipes/queue-lock.js';
import { ReadWriteLock } from '../../lib/recipes/read-write-lock.js';
import { Semaphore } from '../../lib/recipes/semaphore.js';
import { inspectLock } from '../../lib/recipes/inspect.js';
import { curatorMutexDriver, kazooReadDriver } from '../../lib/queue/foreign-drivers.js';
import { RecipeRuntime } from '../../lib/recipes/recipe-runtime.js';
import { SimpleLock } from '../../lib/recipes/simple-lock.js';
import { encodeResource } from '../../lib/zookeeper/paths.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';
import { ZkNoNodeError } from '../../lib/zookeeper/zk-errors.js';
import { childrenOf, exists, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const data = (owner: string) => Buffer.from(JSON.stringify({ host: 'test-host', pid: 42, owner }));

describe('inspectAll: every lock under rootPath, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  // Nothing here is about sessions ending: a 3 s lease (STEADY_SESSION), which a loaded machine keeps.
  const connect = useConnections(zk, STEADY_SESSION);

  it('lists each resource with its holders and its waiters in queue order, as ZooKeeper has them', async () => {
    const rootPath = uniqueRoot('all');
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const name = 'orders/42 é'; // needs encoding: the overview gives back the user's name
    const held: GrantedLock[] = [await new FairLock(a!, { rootPath }).acquire(name, { data: data('job-a') })];
    // One at a time, so that the queue order is known: b, then c.
    const waiting = [new FairLock(b!, { rootPath }).acquire(name, { data: data('job-b') })];
    await queueLength(a!, `${rootPath}/${encodeResource(name)}`, 2);
    waiting.push(new FairLock(c!, { rootPath }).acquire(name, { data: data('job-c') }));
    await queueLength(a!, `${rootPath}/${encodeResource(name)}`, 3);
    held.push((await new ReadWriteLock(a!, { rootPath }).write.acquire('doc', { data: data('writer') })) as GrantedLock);
    const reader = new ReadWriteLock(b!, { rootPath }).read.acquire('doc', { data: data('reader') });
    await queueLength(a!, `${rootPath}/doc`, 2);
    held.push(await new Semaphore(a!, { rootPath, permits: 2 }).acquire('pool'));
    held.push(await new Semaphore(b!, { rootPath, permits: 2 }).acquire('pool'));
    const third = new Semaphore(c!, { rootPath, permits: 2 }).acquire('pool');
    await queueLength(a!, `${rootPath}/pool`, 3);
    held.push(await new SimpleLock(c!, { rootPath }).acquire('cron', { data: Buffer.from('not json') }));

    const overview = await inspectAll(new RecipeRuntime(a!, { rootPath }));

    expect(overview.rootPath).toBe(rootPath);
    expect(overview.locks.map((lock) => lock.resource)).toEqual(['cron', 'doc', 'orders/42 é', 'pool']);
    for (const lock of overview.locks.filter((l) => l.recipe === 'queue')) {
      // What ZooKeeper holds, in sequence order: the holders first, then the waiters.
      const children = (await childrenOf(a!, lock.path)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
      expect([...lock.holders, ...lock.waiters].map((node) => node.node)).toEqual(children);
    }
    const [cron, doc, orders, pool] = overview.locks;
    expect(cron).toMatchObject({ recipe: 'simple', holders: [{ mode: 'simple', data: 'not json', sessionId: c!.sessionId }], waiters: [] });
    expect(doc!.holders.map((n) => [n.mode, n.data])).toEqual([['write', { host: 'test-host', pid: 42, owner: 'writer' }]]);
    expect(doc!.waiters.map((n) => [n.mode, n.sessionId])).toEqual([['read', b!.sessionId]]);
    expect(orders!.holders.map((n) => n.sessionId)).toEqual([a!.sessionId]);
    expect(orders!.waiters.map((n) => [n.sessionId, (n.data as { owner: string }).owner])).toEqual([
      [b!.sessionId, 'job-b'],
      [c!.sessionId, 'job-c'],
    ]);
    expect(pool!.holders.map((n) => [n.mode, n.permits])).toEqual([
      ['semaphore', 2],
      ['semaphore', 2],
    ]);
    expect(pool!.waiters.map((n) => n.sessionId)).toEqual([c!.sessionId]);
    for (const node of overview.locks.flatMap((l) => [...l.holders, ...l.waiters])) {
      expect(ageOf(node.createdAt, overview.readAt)).toBeGreaterThanOrEqual(0);
    }

    for (const lock of held) await lock.release();
    await Promise.all([...waiting, reader, third].map(async (p) => (await p).release()));
  });

  it("lists a module's locks in the Curator or kazoo layout under rootPath by their own rules, and leaves our own as they were", async () => {
    const rootPath = uniqueRoot('foreignroot');
    const [a, b] = await Promise.all([connect(), connect()]);
    const held = [await new QueueLock(a!, curatorMutexDriver, { rootPath }).acquire('invoice', { data: data('java-side') })];
    const waiting = new QueueLock(b!, curatorMutexDriver, { rootPath }).acquire('invoice', { data: data('next') });
    await queueLength(a!, `${rootPath}/invoice`, 2);
    held.push(await new QueueLock(b!, kazooReadDriver, { rootPath }).acquire('report'));
    held.push(await new FairLock(a!, { rootPath }).acquire('ours'));

    const overview = await inspectAll(new RecipeRuntime(a!, { rootPath }));
    expect(overview.locks.map((lock) => [lock.resource, lock.layout, lock.holders.length, lock.waiters.length])).toEqual([
      ['invoice', 'curator', 1, 1],
      ['ours', 'nestjs-zk-lock', 1, 0],
      ['report', 'kazoo', 1, 0],
    ]);
    const [invoice] = overview.locks;
    const names = (await childrenOf(a!, `${rootPath}/invoice`)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    expect([...invoice!.holders, ...invoice!.waiters].map((node) => [node.node, node.sessionId])).toEqual([
      [names[0], a!.sessionId],
      [names[1], b!.sessionId],
    ]);
    // A layout asked for is the one read: these nodes are not ours.
    const runtime = new RecipeRuntime(a!, { rootPath });
    await expect(inspectLock(runtime, 'invoice', { layout: 'kazoo' })).rejects.toThrow(/'kazoo' does not match the lock at .*Curator's InterProcessMutex/);
    // Ours named too: never read as a free lock.
    await expect(inspectLock(runtime, 'invoice', { layout: 'nestjs-zk-lock' })).rejects.toThrow(/'nestjs-zk-lock' does not match the lock at .*Curator's InterProcessMutex/);

    for (const lock of held) await lock.release();
    await (await waiting).release();
  });

  it('reads a missing rootPath as no locks, and does not create it', async () => {
    const connection = await connect();
    const rootPath = `${uniqueRoot('missing')}/deeper`;
    const overview = await inspectAll(new RecipeRuntime(connection, { rootPath }));
    expect(overview.locks).toEqual([]);
    expect(await exists(connection, rootPath)).toBe(false);
    expect(await exists(connection, rootPath.slice(0, rootPath.lastIndexOf('/')))).toBe(false);
  });

  it('leaves out a lock whose parent vanishes between the listing and its read, and nodes that are not encoded names', async () => {
    const rootPath = uniqueRoot('vanish');
    const connection = await connect();
    const gone = await new FairLock(connection, { rootPath }).acquire('gone');
    const stays = await new FairLock(connection, { rootPath }).acquire('stays');
    const session = await connection.session();
    for (const foreign of ['%zz', 'A%41']) await session.create(`${rootPath}/${foreign}`, '', 'PERSISTENT');
    // After rootPath is listed, and before any resource is read, "gone" is released and its
    // parent deleted: inspectAll meets a missing node for a name it listed.
    const source = {
      live: undefined,
      session: async (): Promise<ZkSessionApi> => interceptListing(session, rootPath, async () => {
        await gone.release();
        // The parent is a container: once empty, the server's reaper (every 200 ms on the test
        // servers) may delete it first. Either way it is gone; a NoNode thrown from here would come
        // out of inspectAll's listing, which reads it as a missing rootPath (no locks at all).
        await session.delete(`${rootPath}/gone`).catch((error: unknown) => {
          if (!(error instanceof ZkNoNodeError)) throw error;
        });
      }),
    };
    expect(await childrenOf(connection, rootPath)).toEqual(['%zz', 'A%41', 'gone', 'stays']);
    const overview = await inspectAll(new RecipeRuntime(source, { rootPath }), { concurrency: 1 });
    expect(overview.locks.map((lock) => lock.resource)).toEqual(['stays']);
    expect(await exists(connection, `${rootPath}/gone`)).toBe(false);
    await stays.release();
  });

  it('refuses a concurrency that is not a positive integer', async () => {
    const runtime = new RecipeRuntime(await connect(), { rootPath: uniqueRoot('conc') });
    await expect(inspectAll(runtime, { concurrency: 0 })).rejects.toThrow(/concurrency.*positive integer/);
  });

  it('maps a child name back to its resource only when it is what encodeResource makes', () => {
    expect(resourceOf('a%2Fb')).toBe('a/b');
    expect(resourceOf('%zz')).toBeUndefined(); // malformed escape
    expect(resourceOf('A%41')).toBeUndefined(); // decodes to "AA", which encodes differently
    expect(ageOf(new Date(1000), new Date(3500))).toBe(2500);
    expect(ageOf(new Date(5000), new Date(3500))).toBe(0); // a server clock ahead of ours
    expect(ageOf(undefined, new Date())).toBeUndefined();
  });
});

/** A session whose first listing of `path` runs `between` before it answers. */
function interceptListing(session: ZkSessionApi, path: string, between: () => Promise<void>): ZkSessionApi {
  let done = false;
  return new Proxy(session, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'getChildren') return typeof value === 'function' ? value.bind(target) : value;
      return async (listed: string) => {
        const result = await target.getChildren(listed);
        if (listed === path && !done) {
          done = true;
          await between();
        }
        return result;
      };
    },
  });
}


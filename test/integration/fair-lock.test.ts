import { describe, expect, it } from 'vitest';
import { LockAbortedError, LockLostError, LockNotHeldError, LockTimeoutError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import {
  childrenOf,
  eventually,
  exists,
  expireSession,
  STEADY_SESSION,
  uniqueRoot,
  useConnections,
  useZooKeeper,
  watchesByPath,
} from '../support/zk-fixtures.js';

describe('fair exclusive lock on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  // Nothing here waits for a session to time out (expiry is forced): a lease a busy machine cannot
  // run out, so that no waiter queues again in a new session mid-test.
  const connect = useConnections(zk, STEADY_SESSION);

  async function clients(count: number, rootPath: string) {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const connection = await connect();
        return { connection, lock: new FairLock(connection, { rootPath }) };
      }),
    );
  }

  it('lets exactly one of two clients hold, and passes the lock on release', async () => {
    const root = uniqueRoot('two');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('orders:42');
    let bHolds = false;
    const bWaits = b!.lock.acquire('orders:42').then((lock) => {
      bHolds = true;
      return lock;
    });
    await eventually(async () => (await childrenOf(a!.connection, `${root}/orders:42`)).length === 2, { what: 'b to queue' });
    expect(bHolds).toBe(false);
    expect(held.isHeld()).toBe(true);
    await held.release();
    const bLock = await bWaits;
    expect(bLock.isHeld()).toBe(true);
    expect(held.isHeld()).toBe(false);
    expect(BigInt(bLock.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await bLock.release();
    expect(await childrenOf(a!.connection, `${root}/orders:42`)).toEqual([]);
  });

  it('serves ten contenders in the order they queued', async () => {
    const root = uniqueRoot('fifo');
    const [holderClient, ...contenders] = await clients(11, root);
    const holder = await holderClient!.lock.acquire('queue');
    const order: number[] = [];
    const done: Promise<void>[] = [];
    for (const [index, contender] of contenders.entries()) {
      done.push(
        contender.lock.acquire('queue').then(async (lock) => {
          order.push(index);
          await lock.release();
        }),
      );
      await eventually(async () => (await childrenOf(holderClient!.connection, `${root}/queue`)).length === index + 2, {
        what: `contender ${index} to queue`,
      });
    }
    await holder.release();
    await Promise.all(done);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('gives each waiter one watch, on its predecessor only, and none on the queue itself', async () => {
    const root = uniqueRoot('herd');
    const [holderClient, ...waiters] = await clients(6, root);
    const holder = await holderClient!.lock.acquire('r');
    const done = waiters.map((w) => w.lock.acquire('r').then((lock) => lock.release()));
    await eventually(async () => (await childrenOf(holderClient!.connection, `${root}/r`)).length === 6, { what: 'queue' });
    const nodes = await childrenOf(holderClient!.connection, `${root}/r`);
    const watched = await eventually(
      async () => {
        const byPath = await watchesByPath(zk.connectString);
        const mine = [...byPath].filter(([path]) => path.startsWith(root));
        return mine.length === 5 ? mine : undefined;
      },
      { what: 'five watches' },
    );
    const sequenceOrder = [...nodes].sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    // Every node but the last is watched by exactly one session; the queue's parent by none.
    expect(new Map(watched)).toEqual(new Map(sequenceOrder.slice(0, 5).map((name) => [`${root}/r/${name}`, 1])));
    await holder.release();
    await Promise.all(done);
  });

  it('tryAcquire returns null at once while the lock is held, and leaves no node', async () => {
    const root = uniqueRoot('try');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('t');
    expect(await b!.lock.tryAcquire('t')).toBeNull();
    expect(await childrenOf(a!.connection, `${root}/t`)).toHaveLength(1);
    await held.release();
    const free = await b!.lock.tryAcquire('t');
    expect(free?.isHeld()).toBe(true);
    await free!.release();
  });

  it('a timed-out acquire throws LockTimeoutError after about the timeout and removes its node', async () => {
    const root = uniqueRoot('timeout');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('t');
    const started = performance.now();
    const error = await b!.lock.acquire('t', { waitTimeoutMs: 300 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).message).toMatch(/Timed out after 300 ms waiting for the lock on "t"/);
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(await childrenOf(a!.connection, `${root}/t`)).toEqual([held.path.split('/').pop()]);
    await held.release();
  });

  it('waitTimeoutMs 0 fails at once with LockTimeoutError when busy', async () => {
    const root = uniqueRoot('zero');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('z');
    await expect(b!.lock.acquire('z', { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await childrenOf(a!.connection, `${root}/z`)).toHaveLength(1);
    await held.release();
  });

  it('aborting a waiter rejects with LockAbortedError and removes its node', async () => {
    const root = uniqueRoot('abort');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('t');
    const controller = new AbortController();
    const waiting = b!.lock.acquire('t', { signal: controller.signal });
    await eventually(async () => (await childrenOf(a!.connection, `${root}/t`)).length === 2, { what: 'queue' });
    controller.abort(new Error('user went away'));
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAbortedError);
    expect((error as Error).cause).toEqual(new Error('user went away'));
    expect(await childrenOf(a!.connection, `${root}/t`)).toHaveLength(1);
    await held.release();
  });

  it("when the holder's session expires, its signal aborts with LockLostError and the waiter gets the lock", async () => {
    const root = uniqueRoot('expire');
    const [a, b] = await clients(2, root);
    const held = await a!.lock.acquire('e');
    const next = b!.lock.acquire('e');
    await eventually(async () => (await childrenOf(b!.connection, `${root}/e`)).length === 2, { what: 'queue' });
    const lost = new Promise<unknown>((resolve) => held.signal.addEventListener('abort', () => resolve(held.signal.reason)));
    await expireSession(zk.connectString, a!.connection.sessionCredentials()!);
    const bLock = await next;
    expect(await lost).toBeInstanceOf(LockLostError);
    expect(held.isHeld()).toBe(false);
    expect(BigInt(bLock.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    // The connection opened a fresh session and works again.
    await eventually(() => a!.connection.state === 'connected', { what: 'a new session' });
    await bLock.release();
    const again = await a!.lock.acquire('e');
    await again.release();
  });

  it('releasing twice throws LockNotHeldError', async () => {
    const [a] = await clients(1, uniqueRoot('twice'));
    const held = await a!.lock.acquire('x');
    await held.release();
    await expect(held.release()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it("a grant's token is the epoch at the grant, its queue's czxid and its node's sequence, the same at every read", async () => {
    const root = uniqueRoot('token');
    const [a] = await clients(1, root);
    const lock = new FairLock(a!.connection, { rootPath: root, tokenEpoch: 7 });
    await (await lock.acquire('t')).release(); // the parent exists: the grant below is a warm one
    const held = (await lock.acquire('t')) as GrantedLock;
    const { stat } = await (await a!.connection.session()).getChildren(`${root}/t`);
    const token = `0007${String(stat.czxid).padStart(20, '0')}${held.path.slice(-10)}000000`;
    expect(held.fencingToken).toBe(token);
    expect(held.fencingToken).toBe(token);
    await held.release();
    expect(held.fencingToken).toBe(token);
  });

  it('fencing tokens keep growing when the lock parent is reaped and created again', async () => {
    const root = uniqueRoot('reap');
    const [a, b] = await clients(2, root);
    const tokens: bigint[] = [];
    const first = await a!.lock.acquire('p');
    tokens.push(BigInt(first.fencingToken));
    await first.release();
    // Empty container nodes are reaped by the server; wait for it, then lock again.
    await eventually(async () => !(await exists(a!.connection, `${root}/p`)), { what: 'the empty parent to be reaped' });
    const second = await b!.lock.acquire('p');
    tokens.push(BigInt(second.fencingToken));
    await second.release();
    const third = await a!.lock.acquire('p');
    tokens.push(BigInt(third.fencingToken));
    await third.release();
    expect(tokens[1]).toBeGreaterThan(tokens[0]!);
    expect(tokens[2]).toBeGreaterThan(tokens[1]!);
    expect(first.fencingToken).toMatch(/^\d{40}$/);
    // String order agrees with BigInt order.
    expect([third, first, second].map((l) => l.fencingToken).sort()).toEqual([first, second, third].map((l) => l.fencingToken));
  });

  it('leaves no lock node and no watch behind once the clients close', async () => {
    const root = uniqueRoot('clean');
    const [a, b, c] = await clients(3, root);
    const held = await a!.lock.acquire('k');
    await expect(c!.lock.acquire('k', { waitTimeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    const bWaits = b!.lock.acquire('k');
    await eventually(async () => (await childrenOf(a!.connection, `${root}/k`)).length === 2, { what: 'queue' });
    await held.release();
    await (await bWaits).release();
    for (const client of [a, b, c]) client!.connection.close();
    const observer = await connect();
    await eventually(async () => (await childrenOf(observer, `${root}/k`)).length === 0, { what: 'no nodes' });
    await eventually(
      async () => [...(await watchesByPath(zk.connectString)).keys()].every((path) => !path.startsWith(root)),
      { what: 'no watches under the root' },
    );
  });
});

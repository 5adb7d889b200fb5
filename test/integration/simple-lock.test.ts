import { afterEach, describe, expect, it } from 'vitest';
import { IncompatibleLockError, LockLostError, LockTimeoutError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { SimpleLock } from '../../lib/recipes/simple-lock.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, expireSession } from '../support/zk-fixtures.js';
import { startZkProxy, type ZkProxy } from '../support/zk-proxy.js';

describe('simple lock on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  let proxy: ZkProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  async function viaProxy() {
    const [host, port] = zk.connectString.split(':');
    proxy = await startZkProxy({ host, port: Number(port) });
    return connect({ connectionString: proxy.connectString, sessionTimeoutMs: 4000 });
  }

  it("a grant's token is the epoch at the grant and its node's czxid (no queue: sequence 0)", async () => {
    const root = uniqueRoot('simple-token');
    const connection = await connect();
    const held = (await new SimpleLock(connection, { rootPath: root, tokenEpoch: 12 }).acquire('t')) as GrantedLock;
    const { stat } = await (await connection.session()).getData(held.path);
    expect(held.fencingToken).toBe(`0012${String(stat.czxid).padStart(20, '0')}${'0'.repeat(16)}`);
    await held.release();
  });

  it('lets one of several clients hold at a time, with growing tokens, and leaves no node', async () => {
    const root = uniqueRoot('simple');
    const locks = await Promise.all([1, 2, 3, 4].map(async () => new SimpleLock(await connect(), { rootPath: root })));
    let holding = 0;
    let most = 0;
    const tokens: bigint[] = [];
    await Promise.all(
      locks.map(async (lock) => {
        for (let i = 0; i < 10; i++) {
          const held = await lock.acquire('job');
          holding += 1;
          most = Math.max(most, holding);
          tokens.push(BigInt(held.fencingToken));
          await new Promise((r) => setTimeout(r, 1));
          holding -= 1;
          await held.release();
        }
      }),
    );
    expect(most).toBe(1);
    expect(tokens).toEqual([...tokens].sort((a, b) => (a < b ? -1 : 1)));
    expect(new Set(tokens).size).toBe(40);
    expect(await childrenOf(await connect(), root)).toEqual([]);
  });

  it('answers tryAcquire and a timeout without leaving anything behind', async () => {
    const root = uniqueRoot('simpletry');
    const [a, b] = await Promise.all([connect(), connect()]);
    const held = await new SimpleLock(a, { rootPath: root }).acquire('job');
    const other = new SimpleLock(b, { rootPath: root });
    expect(await other.tryAcquire('job')).toBeNull();
    await expect(other.acquire('job', { waitTimeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await childrenOf(a, root)).toEqual(['job']);
    await held.release();
    const mine = await other.tryAcquire('job');
    expect(mine?.isHeld()).toBe(true);
    await mine!.release();
  });

  it('costs one round trip of create + read to take, and one delete to release, on a name never used before', async () => {
    const root = uniqueRoot('simplewire');
    const connection = await viaProxy();
    const lock = new SimpleLock(connection, { rootPath: root });
    // Creates rootPath, and keeps it: the test server reaps an empty container within 200 ms, and a
    // reaped parent would make this acquire create it again.
    const keeper = await lock.acquire('warm-up');
    proxy!.clearTraffic();
    const held = await lock.acquire('fresh');
    const acquireTraffic = proxy!.traffic();
    proxy!.clearTraffic();
    await held.release();
    const releaseTraffic = proxy!.traffic();
    expect(acquireTraffic.map((e) => (e.kind === 'request' ? e.op : 'reply'))).toEqual(['create', 'getData', 'reply', 'reply']);
    expect(releaseTraffic.map((e) => (e.kind === 'request' ? e.op : 'reply'))).toEqual(['delete', 'reply']);
    await keeper.release();
  });

  it('adopts its own node when the reply to its create was lost', async () => {
    const root = uniqueRoot('simplelost');
    const connection = await viaProxy();
    const lock = new SimpleLock(connection, { rootPath: root });
    await (await lock.acquire('warm-up')).release();
    const fired = proxy!.loseNextCreateReply('adopt-me');
    const held = await lock.acquire('adopt-me');
    await fired;
    expect(held.isHeld()).toBe(true);
    expect(await childrenOf(await connect(), root)).toEqual(['adopt-me']);
    await held.release();
    expect(await childrenOf(await connect(), root)).toEqual([]);
  });

  it('refuses to share a name with a queue-based lock, from either side', async () => {
    const root = uniqueRoot('simplemix');
    const [a, b] = await Promise.all([connect(), connect()]);
    const fair = new FairLock(a, { rootPath: root });
    const simple = new SimpleLock(b, { rootPath: root });
    const queued = await fair.acquire('mixed');
    await expect(simple.acquire('mixed')).rejects.toBeInstanceOf(IncompatibleLockError);
    await queued.release();
    // The fair lock's parent is empty now: the simple lock clears it rather than wait for the reaper.
    const held = await simple.acquire('mixed');
    await expect(fair.acquire('mixed')).rejects.toThrow(/held with the simple lock/);
    await held.release();
    expect(await childrenOf(a, root)).toEqual([]);
  });

  it("tells the holder when its session expires, and lets a waiter take over with a higher token", async () => {
    const root = uniqueRoot('simpleexpire');
    const [a, b] = await Promise.all([connect(), connect()]);
    const held = await new SimpleLock(a, { rootPath: root }).acquire('job');
    const next = new SimpleLock(b, { rootPath: root }).acquire('job');
    const lost = new Promise<unknown>((resolve) => held.signal.addEventListener('abort', () => resolve(held.signal.reason)));
    await expireSession(zk.connectString, a.sessionCredentials()!);
    expect(await lost).toBeInstanceOf(LockLostError);
    const taken = await next;
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await taken.release();
  });
  it('takes a zkPath whose parent is missing: the parent is created (persistent), as for any lock', async () => {
    const root = uniqueRoot('simple-root');
    const elsewhere = uniqueRoot('simple-zkpath');
    const connection = await connect();
    const lock = new SimpleLock(connection, { rootPath: root });
    const held = await lock.acquire('job', { zkPath: `${elsewhere}/a/job`, waitTimeoutMs: 5000 });
    expect(held.path).toBe(`${elsewhere}/a/job`);
    expect(await childrenOf(connection, `${elsewhere}/a`)).toEqual(['job']);
    await held.release();
    expect(await childrenOf(connection, `${elsewhere}/a`)).toEqual([]);
  });
});

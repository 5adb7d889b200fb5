/**
 * A client whose connect string names only observers: an observer votes in nothing and forwards
 * every write to the leader, and its reads may lag the leader's. Locks, read/write locks and
 * elections must behave as on voting members.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { Candidacy } from '../../lib/recipes/candidacy.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { type DynamicEnsemble, startDynamicEnsemble, waitForMode } from '../support/dynamic-ensemble.js';
import { childrenOf, eventually, uniqueRoot } from '../support/zk-fixtures.js';

describe('a client of observers only', () => {
  let ensemble: DynamicEnsemble;
  let observers: string;
  const closers: (() => unknown)[] = [];
  beforeAll(async () => {
    // One voter (the leader) and two observers: three servers, the fewest that make the case.
    ensemble = await startDynamicEnsemble({ roles: ['participant', 'observer', 'observer'] });
    await waitForMode(ensemble.member(2), /Mode: observer/);
    await waitForMode(ensemble.member(3), /Mode: observer/);
    observers = ensemble.connectStringOf([2, 3]);
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await ensemble?.stop();
  });

  // Sessions as the test ensemble's tick allows (syncLimit × tickTime = 1 s, see ensemble.test.ts).
  const service = (rootPath: string): LockService => {
    const locks = new LockService({ connectionString: observers, rootPath, sessionTimeoutMs: 4000, leaseMarginMs: 1500, rootAclCheck: 'off', logEvents: false });
    closers.push(() => locks.onApplicationShutdown());
    return locks;
  };

  it('are the only servers the sessions talk to, although the ensemble config they follow names the leader too', async () => {
    const connections = Array.from({ length: 12 }, () => new ZkConnection({ connectionString: observers }));
    for (const connection of connections) closers.push(() => connection.close());
    await Promise.all(connections.map((c) => c.connect()));
    await eventually(() => connections.every((c) => c.ensemble.configVersion !== undefined), { what: 'the config to be read' });
    for (const c of connections) expect(c.ensemble.members).toEqual(observers.split(','));
    // Were the leader in their list, the C client would move each session there with probability
    // 1/3 (to spread the load): all 12 would stay with probability under 1%.
    const sessions = (await ensemble.member(1).server.fourLetter('cons')).split('\n').filter((line) => /sid=0x[1-9a-f]/.test(line));
    expect(sessions).toEqual([]);
  });

  it('hand an exclusive lock from holder to waiter in order, with a higher fencing token', async () => {
    const rootPath = uniqueRoot('observer-lock');
    const [one, two] = [service(rootPath), service(rootPath)];
    await Promise.all([one.onModuleInit(), two.onModuleInit()]);
    const held = await one.acquire('job');
    const waiting = two.acquire('job');
    const watcher = new ZkConnection({ connectionString: observers });
    closers.push(() => watcher.close());
    await watcher.connect();
    await eventually(async () => (await childrenOf(watcher, `${rootPath}/job`)).length === 2, { what: 'the waiter to queue' });
    expect(await two.tryAcquire('job')).toBeNull();
    await held.release();
    const next = await waiting;
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await next.release();
  });

  it('share a read lock between readers and keep a writer out until both are gone', async () => {
    const rootPath = uniqueRoot('observer-rw');
    const [one, two, three] = [service(rootPath), service(rootPath), service(rootPath)];
    await Promise.all([one.onModuleInit(), two.onModuleInit(), three.onModuleInit()]);
    const r1 = await one.acquire('doc', { mode: 'read' });
    const r2 = await two.acquire('doc', { mode: 'read' });
    let written = false;
    const writer = three.acquire('doc', { mode: 'write' }).then((handle) => {
      written = true;
      return handle;
    });
    await r1.release();
    expect(await one.tryAcquire('doc', { mode: 'write' })).toBeNull();
    expect(written).toBe(false);
    await r2.release();
    const w = await writer;
    expect(BigInt(w.fencingToken)).toBeGreaterThan(BigInt(r2.fencingToken));
    await w.release();
  });

  it('elect one leader, and the next when it leaves', async () => {
    const rootPath = uniqueRoot('observer-election');
    const connections = [0, 1].map(() => new ZkConnection({ connectionString: observers, sessionTimeoutMs: 4000, leaseMarginMs: 1500 }));
    for (const connection of connections) closers.push(() => connection.close());
    await Promise.all(connections.map((c) => c.connect()));
    const a = new Candidacy(connections[0]!, 'group', { id: 'a' }, { rootPath });
    await eventually(async () => (await childrenOf(connections[1]!, `${rootPath}/group`)).length === 1, { what: 'a to queue' });
    const b = new Candidacy(connections[1]!, 'group', { id: 'b' }, { rootPath });
    closers.push(() => b.close());
    const first = await a.leadership();
    expect(b.isLeader()).toBe(false);
    expect(await b.leader()).toBe('a');
    await a.close();
    const second = await b.leadership();
    expect(first.signal.aborted).toBe(true);
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
  });
});

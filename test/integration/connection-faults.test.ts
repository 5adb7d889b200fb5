import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, LockLostError, ZkConnectionError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { QueueLock } from '../../lib/recipes/queue-lock.js';
import { curatorMutexDriver, kazooLockDriver } from '../../lib/queue/foreign-drivers.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ConnectionState } from '../../lib/zookeeper/zk-connection-like.js';
import { ZkConnectionLossError } from '../../lib/zookeeper/zk-errors.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZkProxy, useZooKeeper, eventually } from '../support/zk-fixtures.js';
import type { ZkProxy } from '../support/zk-proxy.js';
import { freePorts } from '../support/zk-server.js';

describe('connection faults against a real ZooKeeper', () => {
  // Sessions up to 30 s, for the restart tests: a JVM's restart on a loaded machine can take longer
  // than the 4 s sessions the test servers grant by default, and then the leases rightly run out.
  // Empty lock parents are reaped at ZooKeeper's own pace (60 s), not the test servers' 200 ms: the
  // wire tests create a parent, release, and then count a warm acquire's requests, which a parent
  // reaped in between would turn into a cold one (createContainer, create again).
  const zk = useZooKeeper({ own: true, config: ['maxSessionTimeout=30000'], containerCheckIntervalMs: 60_000 });
  /** Sessions whose leases outlast a server restart (a standalone server answers for itself: a small margin is enough). */
  const THROUGH_A_RESTART = { sessionTimeoutMs: 20_000, leaseMarginMs: 400 } as const;
  const connect = useConnections(zk, STEADY_SESSION);
  const startProxy = useZkProxy(zk);
  let proxy: ZkProxy | undefined;

  async function viaProxy(options: { sessionTimeoutMs?: number; leaseMarginMs?: number } = {}) {
    proxy = await startProxy();
    return connect({ connectionString: proxy.connectString, ...options });
  }

  it('recovers a create whose reply was lost by adopting its own node, never creating a second one', async () => {
    const root = uniqueRoot('lostreply');
    const connection = await viaProxy();
    const observer = await connect();
    const lock = new FairLock(connection, { rootPath: root });
    // Create the parent first, so the create that loses its reply is the lock node's.
    await (await lock.acquire('r')).release();
    const fired = proxy!.loseNextCreateReply('x-');
    const held = await lock.acquire('r');
    await fired;
    const nodes = await childrenOf(observer, `${root}/r`);
    expect(nodes).toHaveLength(1);
    expect(`${root}/r/${nodes[0]}`).toBe(held.path);
    expect(held.isHeld()).toBe(true);
    await held.release();
    expect(await childrenOf(observer, `${root}/r`)).toEqual([]);
  });

  for (const [layout, driver, marker] of [
    ['curator', curatorMutexDriver, '-lock-'],
    ['kazoo', kazooLockDriver, '__lock__'],
  ] as const) {
    it(`${layout} layout: a create whose reply was lost is found by its unique prefix (as ${layout === 'curator' ? "Curator's protected mode" : "kazoo's _find_node"} does) and adopted`, async () => {
      const root = uniqueRoot(`lostreply-${layout}`);
      const zkPath = `${root}-svc/lock`;
      const connection = await viaProxy();
      const observer = await connect();
      const lock = new QueueLock(connection, driver, { rootPath: root });
      await (await lock.acquire('r', { zkPath })).release();
      const fired = proxy!.loseNextCreateReply(marker);
      const held = await lock.acquire('r', { zkPath });
      await fired;
      const nodes = await childrenOf(observer, zkPath);
      expect(nodes).toHaveLength(1);
      expect(`${zkPath}/${nodes[0]}`).toBe(held.path);
      await held.release();
      expect(await childrenOf(observer, zkPath)).toEqual([]);
    });
  }

  it('an uncontended acquire is one round trip of create + list, and release one delete', async () => {
    const root = uniqueRoot('wire');
    const connection = await viaProxy({ sessionTimeoutMs: 4000 });
    const lock = new FairLock(connection, { rootPath: root });
    await (await lock.acquire('w')).release(); // creates the parent
    proxy!.clearTraffic();
    const held = await lock.acquire('w');
    const acquireTraffic = proxy!.traffic();
    proxy!.clearTraffic();
    await held.release();
    const releaseTraffic = proxy!.traffic();
    // Both requests leave before the first reply comes back.
    expect(acquireTraffic.map((e) => (e.kind === 'request' ? e.op : 'reply'))).toEqual(['create', 'getChildren2', 'reply', 'reply']);
    expect(releaseTraffic.map((e) => (e.kind === 'request' ? e.op : 'reply'))).toEqual(['delete', 'reply']);
  });

  it('release retries through a dropped connection and resolves once the node is gone', async () => {
    const root = uniqueRoot('relloss');
    // A standalone server: its own answers prove the session alive, so a small lease margin is
    // enough, and the lease (3.6 s) outlasts the cut.
    const connection = await viaProxy({ sessionTimeoutMs: 4000, leaseMarginMs: 400 });
    const observer = await connect();
    const held = await new FairLock(connection, { rootPath: root }).acquire('d');
    proxy!.setRefusing(true);
    proxy!.dropConnections();
    const releasing = held.release();
    let settled = false;
    void releasing.finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false); // cannot be confirmed while cut off
    expect(await childrenOf(observer, `${root}/d`)).toHaveLength(1);
    proxy!.setRefusing(false);
    await releasing;
    expect(held.isHeld()).toBe(false);
    expect(await childrenOf(observer, `${root}/d`)).toEqual([]);
  });

  it('a dropped connection that comes back keeps the lock and reports suspended then reconnected', async () => {
    const root = uniqueRoot('blip');
    const connection = await viaProxy();
    const states: ConnectionState[] = [];
    connection.onStateChange((state) => states.push(state));
    const held = await new FairLock(connection, { rootPath: root }).acquire('b');
    proxy!.dropConnections();
    await eventually(() => states.includes('reconnected'), { what: 'reconnected' });
    expect(states).toEqual(['suspended', 'reconnected']);
    expect(held.isHeld()).toBe(true);
    expect(held.signal.aborted).toBe(false);
    await held.release();
  });

  it('a request whose send meets a reset connection does not abort the process or end the session: it fails with a connection loss, the session resumes on a new handle, its holder keeps the lock and its waiter is still woken', async () => {
    const root = uniqueRoot('reset');
    const connection = await viaProxy({ sessionTimeoutMs: 4000 });
    const observer = await connect();
    const states: ConnectionState[] = [];
    connection.onStateChange((state) => states.push(state));
    const lock = new FairLock(connection, { rootPath: root });
    const held = await lock.acquire('held');
    const first = await new FairLock(observer, { rootPath: root }).acquire('queue');
    const waiting = lock.acquire('queue');
    await eventually(async () => (await childrenOf(observer, `${root}/queue`)).length === 2, { what: 'the waiter queued' });
    const session = await connection.session();
    // setImmediate runs before the event loop polls again, so the send meets the reset before the
    // addon's poll watcher has seen it: the C client closes its socket inside the call and leaves
    // that request and those in flight queued for the old connection, so the handle must be replaced
    // (going on with it would match replies to the wrong requests).
    await session.getData('/');
    proxy!.resetConnections();
    const outcome = await new Promise<unknown>((resolve) => setImmediate(() => session.getData('/').then(() => 'answered', resolve)));
    expect(outcome).toBeInstanceOf(ZkConnectionLossError);
    await eventually(() => states.includes('reconnected'), { what: 'the session back on a new handle' });
    expect(states).toEqual(['suspended', 'reconnected']);
    expect(connection.sessionId).toBe(session.id);
    expect(held.isHeld()).toBe(true);
    expect(held.signal.aborted).toBe(false);
    // The waiter's watch went with the old handle; it was woken to look again and watches anew.
    await first.release();
    const granted = await waiting;
    await granted.release();
    await held.release();
    expect(await childrenOf(observer, `${root}/queue`)).toEqual([]);
    expect(await childrenOf(observer, `${root}/held`)).toEqual([]);
  });

  it('a holder cut off for the session timeout is told its lock is lost, and a waiter elsewhere gets it', async () => {
    const root = uniqueRoot('partition');
    // A 3 s lease: a 250 ms one (1 s sessions) could run out on a loaded machine before the cut.
    const connection = await viaProxy(STEADY_SESSION);
    const other = await connect();
    const held = await new FairLock(connection, { rootPath: root }).acquire('p');
    const next = new FairLock(other, { rootPath: root }).acquire('p');
    await eventually(async () => (await childrenOf(other, `${root}/p`)).length === 2, { what: 'queue' });
    const states: ConnectionState[] = [];
    connection.onStateChange((state) => states.push(state));
    proxy!.setRefusing(true);
    proxy!.dropConnections();
    const reason = await new Promise<unknown>((resolve) => {
      if (held.signal.aborted) resolve(held.signal.reason);
      else held.signal.addEventListener('abort', () => resolve(held.signal.reason), { once: true });
    });
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as Error).message).toMatch(/its lease ran out/);
    expect(states).toEqual(['suspended', 'lost']);
    const taken = await next;
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await taken.release();
    // Healed: the connection opens a fresh session and locks again.
    proxy!.setRefusing(false);
    await eventually(() => connection.state === 'connected', { what: 'a fresh session' });
    await (await new FairLock(connection, { rootPath: root }).acquire('p')).release();
  });

  it('a holder whose lease runs out in a short partition is told at once, and its node goes as soon as the partition heals, the session closed rather than left to expire', async () => {
    const root = uniqueRoot('shortcut');
    const connection = await viaProxy({ sessionTimeoutMs: 4000 });
    const observer = await connect();
    const held = await new FairLock(connection, { rootPath: root }).acquire('s');
    const oldSession = connection.sessionId;
    // Held, with a lease of a quarter of the session timeout from the latest answer.
    expect(held.validUntil).toBeGreaterThan(performance.now());
    expect(held.validUntil).toBeLessThanOrEqual(performance.now() + 1000);
    expect(() => held.assertHeld()).not.toThrow();
    // Asking for more than the whole lease could never succeed: a usage error, not a lost lock.
    expect(() => held.assertHeld(4000)).toThrow(InvalidOptionsError);
    expect(() => held.assertHeld(1000)).toThrow(/"forMs".*this session's lease is 1000 ms long/);
    // Less than the lease but more than is left: the lease may not cover it, so the write must not go.
    const left = held.validUntil - performance.now();
    expect(() => held.assertHeld(Math.min(999, left + 50))).toThrow(/less than the \d+ ms asked for/);
    expect(held.isHeld()).toBe(true);
    proxy!.partition('both');
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
    expect((held.signal.reason as LockLostError).reason).toBe('lease-expired');
    expect(() => held.assertHeld()).toThrow(held.signal.reason as Error);
    expect(held.validUntil).toBe(Number.NEGATIVE_INFINITY);
    expect(held.isHeld()).toBe(false);
    // The server still keeps the session (its timeout has not passed), and with it the node.
    expect(await childrenOf(observer, `${root}/s`)).toHaveLength(1);
    proxy!.clearTraffic();
    proxy!.partition('none');
    await eventually(async () => (await childrenOf(observer, `${root}/s`)).length === 0, { what: 'the node to go' });
    expect(proxy!.traffic().some((e) => e.kind === 'request' && e.op === 'closeSession')).toBe(true);
    expect(connection.sessionId).not.toBe(oldSession);
  });

  it('a waiter that gave up keeps no lease going: its session sends no renewal reads', async () => {
    const root = uniqueRoot('gaveup');
    const holder = await connect();
    const held = await new FairLock(holder, { rootPath: root }).acquire('g');
    const connection = await viaProxy({ sessionTimeoutMs: 2000 });
    await expect(new FairLock(connection, { rootPath: root }).acquire('g', { waitTimeoutMs: 200 })).rejects.toThrow(/Timed out/);
    proxy!.clearTraffic();
    // Four lease lengths (a quarter of the session timeout each): a waiter would renew eight times.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(proxy!.traffic().filter((e) => e.kind === 'request')).toEqual([]);
    await held.release();
  });

  it('waiters keep their place through a server restart and all get the lock; no node is orphaned', async () => {
    const root = uniqueRoot('restart');
    const [holderConnection, ...waiterConnections] = await Promise.all(Array.from({ length: 4 }, () => connect(THROUGH_A_RESTART)));
    const holder = await new FairLock(holderConnection!, { rootPath: root }).acquire('s');
    const granted: string[] = [];
    const waiters = waiterConnections.map((c, i) =>
      new FairLock(c, { rootPath: root }).acquire('s').then(async (lock) => {
        granted.push(`w${i}`);
        await lock.release();
      }),
    );
    await eventually(async () => (await childrenOf(holderConnection!, `${root}/s`)).length === 4, { what: 'queue' });
    await zk.server!.stop();
    await zk.server!.start();
    await holder.release();
    await Promise.all(waiters);
    expect(granted.sort()).toEqual(['w0', 'w1', 'w2']);
    await eventually(async () => (await childrenOf(holderConnection!, `${root}/s`)).length === 0, { what: 'no nodes' });
  });

  it('a holder keeps its lock and its session through a server restart shorter than the session timeout', async () => {
    const root = uniqueRoot('keep');
    const connection = await connect(THROUGH_A_RESTART);
    const id = connection.sessionId;
    const states: string[] = [];
    connection.onStateChange((state) => states.push(state));
    const held = await new FairLock(connection, { rootPath: root }).acquire('k');
    await zk.server!.stop();
    await zk.server!.start();
    await eventually(() => connection.state === 'connected', { what: 'the session to reconnect' });
    expect(states).toEqual(['suspended', 'reconnected']);
    expect(connection.sessionId).toBe(id);
    expect(held.signal.aborted).toBe(false);
    await held.release();
  });

  it('an unreachable ZooKeeper fails connect with ZkConnectionError naming the connect string', async () => {
    const [port] = await freePorts(1);
    const connection = new ZkConnection({ connectionString: `127.0.0.1:${port}`, connectTimeoutMs: 500 });
    const error = await connection.connect().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).toMatch(/no server answered within 500 ms/);
    connection.close();
  });

  it('host names are looked up before the C client sees them: a name connects, one that does not resolve fails start-up clearly', async () => {
    const port = zk.connectString.split(':')[1];
    const named = await connect({ connectionString: `localhost:${port}` });
    await (await new FairLock(named, { rootPath: uniqueRoot('named') }).acquire('n')).release();
    const error = await connect({ connectionString: `no-such-host.invalid:${port}`, connectTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect((error as Error).message).toMatch(/"no-such-host\.invalid" does not resolve \(ENOTFOUND\)/);
  });

  it('a garbage connect string is refused up front with InvalidOptionsError', () => {
    for (const bad of ['', 'localhost', 'host:port', '127.0.0.1:2181,,x:1', 'a b:1', 42]) {
      expect(() => new ZkConnection({ connectionString: bad as string })).toThrow(InvalidOptionsError);
    }
    expect(() => new ZkConnection({ connectionString: '127.0.0.1:2181', sessionTimeoutMs: -5 })).toThrow(/sessionTimeoutMs/);
  });
});

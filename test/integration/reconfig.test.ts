/**
 * An ensemble reconfigured under a client (ZooKeeper's dynamic reconfiguration): members 4 and 5
 * added, 1-3 removed and stopped, while the client holds a lock and waits on another. Following
 * `/zookeeper/config` keeps the session; without it the session is lost (the control).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, LockService } from '../../lib/index.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { type DynamicEnsemble, startDynamicEnsemble, waitForMode } from '../support/dynamic-ensemble.js';
import { childrenOf, eventually, uniqueRoot } from '../support/zk-fixtures.js';

describe('an ensemble reconfigured from members 1-3 to members 4-5', () => {
  let ensemble: DynamicEnsemble | undefined;
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await ensemble?.stop();
  });

  /** Members 4 and 5 added, then 1-3 removed and stopped. */
  async function move(): Promise<void> {
    const e = ensemble!;
    await Promise.all([e.startSpare(4), e.startSpare(5)]);
    await e.reconfig({ add: [4, 5] }, [1, 2, 3]);
    await e.reconfig({ remove: [1, 2, 3] }, [4, 5]);
    await Promise.all([1, 2, 3].map((id) => e.member(id).server.stop()));
    await Promise.all([4, 5].map((id) => waitForMode(e.member(id), /Mode: (leader|follower)/)));
  }

  async function scenario(followEnsembleConfig: boolean) {
    // 12 s sessions (the test tick allows 4 s unless told): the move reconnects the holder to 4-5,
    // which took over a 2.5 s lease on a loaded machine. The margin still covers the ensemble's
    // syncLimit × tickTime (1 s, see ensemble.test.ts); the control still loses its session.
    ensemble = await startDynamicEnsemble({ roles: ['participant', 'participant', 'participant'], spares: 2, extraConfig: ['maxSessionTimeout=12000'] });
    const rootPath = uniqueRoot('reconfig');
    const connect = { connectionString: ensemble.connectStringOf([1, 2, 3]), sessionTimeoutMs: 12_000, leaseMarginMs: 1500, followEnsembleConfig };
    const connection = new ZkConnection(connect);
    const holder = new LockService({ connection, rootPath, rootAclCheck: 'off', logEvents: false });
    const other = new LockService({ ...connect, rootPath, rootAclCheck: 'off', logEvents: false });
    closers.push(() => holder.onApplicationShutdown(), () => connection.close(), () => other.onApplicationShutdown());
    await Promise.all([holder.onModuleInit(), other.onModuleInit()]);
    const sessionId = connection.sessionCredentials()!.id;
    const held = await holder.acquire('held');
    const blocker = await other.acquire('awaited');
    const waiting = holder.acquire('awaited', { waitTimeoutMs: 60_000 });
    const observer = new ZkConnection({ connectionString: ensemble.connectStringOf([1, 2, 3]) });
    await observer.connect();
    await eventually(async () => (await childrenOf(observer, `${rootPath}/awaited`)).length === 2, { what: 'the waiter to queue' });
    observer.close();
    waiting.catch(() => undefined);
    await move();
    return { connection, sessionId, other, held, blocker, waiting };
  }

  it('keeps the session: the held lock stays held, the waiter is granted in order, a new acquire works', async () => {
    const { connection, sessionId, other, held, blocker, waiting } = await scenario(true);
    await eventually(() => connection.state === 'connected', { timeoutMs: 30_000, what: 'the holder to reconnect to 4-5' });
    expect([...connection.ensemble.members].sort()).toEqual(ensemble!.connectStringOf([4, 5]).split(',').sort());
    expect(connection.sessionCredentials()!.id).toBe(sessionId);
    await blocker.release();
    const granted = await waiting;
    expect(held.signal.aborted).toBe(false);
    expect(BigInt(granted.fencingToken)).toBeGreaterThan(BigInt(blocker.fencingToken));
    await held.release();
    await granted.release();
    const again = await other.acquire('held', { waitTimeoutMs: 10_000 });
    expect(BigInt(again.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await again.release();
  }, 120_000);

  it('without followEnsembleConfig, the session is lost with its lock (the control)', async () => {
    const { held } = await scenario(false);
    await eventually(() => held.signal.aborted, { timeoutMs: 30_000, what: 'the held lock to be lost' });
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
  }, 120_000);
});

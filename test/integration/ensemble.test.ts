import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairLock } from '../../lib/recipes/queue-lock.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { childrenOf, eventually, fourLetterTo, uniqueRoot } from '../support/zk-fixtures.js';
import { startZkEnsemble, type ZkEnsemble } from '../support/zk-server.js';

describe('on a 3-node ensemble', () => {
  let ensemble: ZkEnsemble;
  const connections: ZkConnection[] = [];
  beforeAll(async () => {
    ensemble = await startZkEnsemble(3);
  });
  afterAll(async () => {
    for (const connection of connections) connection.close();
    await ensemble?.stop();
  });

  async function connectTo(connectionString: string) {
    const connection = new ZkConnection({ connectionString, sessionTimeoutMs: 4000 });
    connections.push(connection);
    await connection.connect();
    return connection;
  }

  it('starts one leader and two followers, each serving on its own loopback port', async () => {
    const modes = await Promise.all(ensemble.servers.map((s) => s.fourLetter('srvr')));
    expect(modes.filter((m) => /Mode: leader/.test(m))).toHaveLength(1);
    expect(modes.filter((m) => /Mode: follower/.test(m))).toHaveLength(2);
  });

  it('the lock survives killing the leader: the holder keeps it, then hands it to the waiter', async () => {
    const root = uniqueRoot('ensemble');
    const a = await connectTo(ensemble.connectString);
    const b = await connectTo(ensemble.connectString);
    const held = await new FairLock(a, { rootPath: root }).acquire('leader-kill');
    const next = new FairLock(b, { rootPath: root }).acquire('leader-kill');
    await eventually(async () => (await childrenOf(b, `${root}/leader-kill`)).length === 2, { what: 'queue' });
    const leader = await ensemble.leader();
    await leader.kill();
    const newLeader = await eventually(() => ensemble.leader().catch(() => undefined), { what: 'a new leader' });
    expect(newLeader!.id).not.toBe(leader.id);
    await held.release();
    const taken = await next;
    expect(held.signal.aborted).toBe(false);
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await taken.release();
    await leader.start();
    await eventually(async () => /Mode: follower/.test(await fourLetterTo(leader.connectString, 'srvr')), {
      what: 'the old leader to rejoin',
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairLock } from '../../lib/recipes/fair-lock.js';
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

  // The test ensemble's syncLimit × tickTime is 1 s: a 1.5 s lease margin covers it (the default,
  // three quarters of the session timeout, would leave a 1 s lease, shorter than an election).
  async function connectTo(connectionString: string) {
    const connection = new ZkConnection({ connectionString, sessionTimeoutMs: 4000, leaseMarginMs: 1500 });
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

  it('keeps an idle session through its server being killed three times, and opens new sessions while a server is down', async () => {
    const connection = await connectTo(ensemble.connectString);
    const id = connection.sessionCredentials()!.id;
    const states: string[] = [];
    connection.onStateChange((state) => states.push(state));
    for (let round = 0; round < 3; round++) {
      const leader = await eventually(() => ensemble.leader().catch(() => undefined), { what: 'a leader' });
      const server = await eventually(async () => {
        for (const candidate of ensemble.servers) {
          if (candidate.running && (await candidate.fourLetter('cons')).includes(`sid=0x${id}`)) return candidate;
        }
        return undefined;
      }, { what: 'the server the session is on' });
      // Killing the leader costs an election, during which no server serves anyone: kill a follower.
      const victim = server!.id === leader!.id ? ensemble.servers.find((s) => s.id !== leader!.id)! : server!;
      await victim.kill();
      // While it is down, a new client whose connect string names it first still gets a session.
      const fresh = await connectTo([victim.connectString, ...ensemble.servers.filter((s) => s !== victim).map((s) => s.connectString)].join(','));
      expect(fresh.state).toBe('connected');
      await eventually(() => connection.state === 'connected', { timeoutMs: 30_000, what: 'the idle session to reconnect' });
      await victim.start();
      await eventually(async () => /Mode: follower/.test(await victim.fourLetter('srvr')), { what: 'the server to rejoin' });
    }
    expect(states).not.toContain('lost');
    expect(connection.sessionCredentials()!.id).toBe(id);
  });

  it('does not give up a session while the ensemble has no quorum, before the session timeout', async () => {
    // Regression: a server without quorum accepts connections and closes them; the binding took ten
    // such empty polls (well under a second) for an expired session and closed the handle, so every
    // holder was told its lock was lost long before the session could have expired.
    const connection = await connectTo(ensemble.connectString);
    const states: string[] = [];
    connection.onStateChange((state) => states.push(state));
    const [a, b] = ensemble.servers;
    await Promise.all([a!.stop(), b!.stop()]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(states).not.toContain('lost');
    await Promise.all([a!.start(), b!.start()]);
    await eventually(() => ensemble.leader().catch(() => undefined), { timeoutMs: 60_000, what: 'a leader' });
  });
});

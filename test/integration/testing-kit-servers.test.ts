/** The testing kit's real-server helpers, as a user's test would use them. */
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockLostError, LockService } from '../../lib/index.js';
import {
  expireSession,
  freePorts,
  startZkEnsemble,
  startZkServer,
  ZooKeeperNotInstalledError,
  type ZkEnsemble,
  type ZkServer,
} from '../../lib/testing/index.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { socketsOf } from '../support/proc-sockets.js';

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startZkServer', () => {
  it('says what to install when the jar or Java is missing, before starting anything', async () => {
    const noJar = startZkServer({ jarPath: '/nonexistent/zookeeper.jar' });
    await expect(noJar).rejects.toBeInstanceOf(ZooKeeperNotInstalledError);
    await expect(noJar).rejects.toThrow(/apt-get install zookeeper.*ZK_JAR/s);
    const noJava = startZkServer({ javaPath: '/nonexistent/bin/java' });
    await expect(noJava).rejects.toMatchObject({ name: 'ZooKeeperNotInstalledError', missing: 'java' });
  });

  it('serves on the port asked for, on 127.0.0.1, keeps its data across a kill and a start, and stops for good', async () => {
    const [port] = await freePorts(1);
    const server: ZkServer = await startZkServer({ port, tickMs: 100 });
    try {
      expect(server.connectString).toBe(`127.0.0.1:${port}`);
      expect(await server.fourLetter('srvr')).toMatch(/Mode: standalone/);
      const connection = new ZkConnection({ connectionString: server.connectString, sessionTimeoutMs: 2000 });
      await connection.connect();
      await (await connection.session()).create('/kept', 'data', 'PERSISTENT');
      connection.close();
      const pid = server.pid;
      await server.kill();
      expect(server.running).toBe(false);
      expect(alive(pid)).toBe(false);
      await server.start();
      const again = new ZkConnection({ connectionString: server.connectString, sessionTimeoutMs: 2000 });
      await again.connect();
      expect((await (await again.session()).getData('/kept')).data.toString()).toBe('data');
      again.close();
    } finally {
      const pid = server.pid;
      await server.stop();
      expect(alive(pid)).toBe(false);
    }
  });

  // The addon marks its sockets close-on-exec (native-addon.test.ts), and the test kit starts
  // servers with every inherited descriptor closed besides: a server started while a connection is
  // open that kept the connection's socket would stop the client from ever reconnecting once the
  // server it was on went away (see lib/testing/isolated-spawn.ts).
  it.runIf(process.platform === 'linux')('a server started while a connection is open holds none of this process\'s sockets', async () => {
    const first = await startZkServer();
    const connection = new ZkConnection({ connectionString: first.connectString });
    let second: ZkServer | undefined;
    try {
      await connection.connect();
      const ours = socketsOf('self');
      expect(ours.size).toBeGreaterThan(0);
      second = await startZkServer();
      const inherited = [...socketsOf(String(second.pid))].filter((socket) => ours.has(socket));
      expect(inherited).toEqual([]);
    } finally {
      connection.close();
      await second?.stop();
      await first.stop();
    }
  });
});

describe('startZkEnsemble', () => {
  let ensemble: ZkEnsemble;
  const connections: ZkConnection[] = [];
  const services: LockService[] = [];
  beforeAll(async () => {
    ensemble = await startZkEnsemble(3);
  });
  afterAll(async () => {
    for (const locks of services) await locks.onApplicationShutdown();
    for (const connection of connections) connection.close();
    const pids = ensemble?.servers.map((s) => s.pid) ?? [];
    await ensemble?.stop();
    expect(pids.filter(alive)).toEqual([]);
  });

  async function service(): Promise<{ locks: LockService; connection: ZkConnection }> {
    const connection = new ZkConnection({ connectionString: ensemble.connectString, sessionTimeoutMs: 4000 });
    connections.push(connection);
    const locks = new LockService({ connection, rootAclCheck: 'off', logEvents: false });
    services.push(locks);
    await locks.onModuleInit();
    return { locks, connection };
  }

  it('keeps locking with a member killed, and expires a session through the leader', async () => {
    const a = await service();
    const b = await service();
    const leader = await ensemble.leader();
    const follower = ensemble.servers.find((s) => s !== leader)!;
    await follower.kill();
    expect(follower.running).toBe(false);
    const held = await a.locks.acquire('quorum', { waitTimeoutMs: 20_000 });
    expect(await b.locks.tryAcquire('quorum')).toBeNull();
    const next = b.locks.acquire('quorum', { waitTimeoutMs: 30_000 });
    const lost = new Promise<unknown>((resolve) => held.signal.addEventListener('abort', () => resolve(held.signal.reason), { once: true }));
    await expireSession(a.connection, async () => (await ensemble.leader()).connectString);
    expect(await lost).toBeInstanceOf(LockLostError);
    const taken = await next;
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await taken.release();
    await follower.start();
    expect(await follower.fourLetter('srvr')).toMatch(/Mode: follower/);
  });
});

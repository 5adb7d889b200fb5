import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockLostError, LockService, ZkConnection, ZkConnectionError, ZkLockModule, ZkTlsError } from '../../lib/index.js';
import type { LockHandle } from '../../lib/recipes/lock-handle.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { eventually, expireSession } from '../support/zk-admin.js';
import { freePorts, type ZkEnsemble, type ZkServer } from '../support/zk-server.js';
import { tlsZooKeeper, type TlsZooKeeper } from '../support/zk-tls-servers.js';
import { describeReport, runFaultSuite } from './suite.js';

/*
 * The fault suite's reduced TLS round: clients connect to the servers' secureClientPort only, with
 * client certificates required. `npm run test:faults:soak:tls` and `npm run test:partitions:tls`
 * run the long versions; partitions.test.ts runs a partition trial over TLS.
 */
describe('over TLS, on a 3-node ensemble', () => {
  let zk: TlsZooKeeper;
  beforeAll(() => {
    zk = tlsZooKeeper();
  });
  afterAll(() => zk?.remove());

  describe('a Nest app holding a lock', () => {
    let ensemble: ZkEnsemble;
    beforeAll(async () => {
      ensemble = await zk.startEnsemble(3);
    }, 120_000);
    afterAll(async () => ensemble?.stop());

    /**
     * An app with ZkLockModule over TLS to every member (its connection supplied, so that the
     * control can expire its session); a long session (the servers grant at most 4 s), so that a failover fits in its lease.
     */
    async function app(rootPath: string, servers = ensemble.servers): Promise<{ locks: LockService; connection: ZkConnection; close(): Promise<void> }> {
      const connectionString = servers.map((s) => zk.side.address(s)).join(',');
      const connection = new ZkConnection({ connectionString, tls: zk.side.tls, sessionTimeoutMs: 8000 });
      const moduleRef = await Test.createTestingModule({ imports: [ZkLockModule.forRoot({ connection, shutdownGraceMs: 50, rootPath })] }).compile();
      const application = moduleRef.createNestApplication({ logger: false });
      await application.init();
      return {
        locks: application.get(LockService),
        connection,
        async close() {
          await application.close();
          connection.close();
        },
      };
    }

    /** The running member whose secure port carries `sessionId`, from its `cons` over TLS. */
    async function serverOf(sessionId: string): Promise<ZkServer | undefined> {
      for (const server of ensemble.servers.filter((s) => s.running)) {
        if ((await zk.side.connections(server).catch(() => '')).includes(`sid=0x${sessionId}`)) return server;
      }
      return undefined;
    }

    /**
     * A holder connected to the two followers only, so that losing its server moves it to the other
     * follower without an election (a new leader takes longer than the holder's lease, which then
     * rightly tells it the lock may be lost), and another app on every member.
     */
    async function holding(rootPath: string): Promise<{ holder: Awaited<ReturnType<typeof app>>; other: Awaited<ReturnType<typeof app>>; held: LockHandle; sessionId: string; server: ZkServer }> {
      const leader = await ensemble.leader();
      const holder = await app(rootPath, ensemble.servers.filter((s) => s !== leader));
      const other = await app(rootPath);
      const held = await holder.locks.acquire('report');
      const sessionId = holder.locks.sessionInfo().sessionId!;
      const server = (await eventually(() => serverOf(sessionId), { what: "the holder's server", intervalMs: 200 }))!;
      expect(holder.locks.sessionInfo()).toMatchObject({ tls: true, heldLocks: 1 });
      return { holder, other, held, sessionId, server };
    }

    it('a session resumed on another server over TLS keeps its locks: the holder is not told, nobody else gets the lock, and the holder releases it', async () => {
      const { holder, other, held, sessionId, server } = await holding('/tls-resume');
      try {
        await server.kill();
        // The client moves its session to another member, over TLS again.
        const moved = await eventually(() => serverOf(sessionId), { what: 'the session on the other follower', timeoutMs: 30_000, intervalMs: 200 });
        expect(moved).not.toBe(server);
        expect(holder.locks.sessionInfo()).toMatchObject({ state: 'connected', sessionId, heldLocks: 1 });
        expect(held.signal.aborted).toBe(false);
        expect(await other.locks.tryAcquire('report')).toBeNull();
        await held.release();
        const next = await other.locks.tryAcquire('report');
        expect(next).not.toBeNull();
        await next!.release();
      } finally {
        await server.start();
        await holder.close();
        await other.close();
      }
    }, 120_000);

    it('a client starts over TLS while a member is down behind a TCP proxy (which accepts, then drops the connection, as a plain port does): it connects to the others', async () => {
      const [nothing] = await freePorts(1);
      const down = await startTcpProxy(nothing!);
      const connections: ZkConnection[] = [];
      const start = (connectionString: string): Promise<void> => {
        const connection = new ZkConnection({ connectionString, tls: zk.side.tls, sessionTimeoutMs: 4000, connectTimeoutMs: 15_000 });
        connections.push(connection);
        return connection.connect();
      };
      try {
        await start([down.connectString, ...ensemble.servers.map((s) => zk.side.address(s))].join(','));
        expect(connections[0]!.state).toBe('connected');
        // Control: with no other member, the probe still says what it found there.
        await expect(start(down.connectString)).rejects.toMatchObject({ name: ZkTlsError.name, failure: 'not-tls' });
      } finally {
        for (const connection of connections) connection.close();
        await down.close();
      }
    }, 60_000);

    it('control: the same holder whose session is expired instead is told it lost the lock, and the other app gets it', async () => {
      const { holder, other, held } = await holding('/tls-expired');
      try {
        const granted = other.locks.acquire('report', { waitTimeoutMs: 30_000 });
        // The injector attaches to the session on a plain port (the server does not care which).
        await expireSession(ensemble.connectString, holder.connection.sessionCredentials()!, async () => (await ensemble.leader()).connectString);
        await eventually(() => held.signal.aborted, { what: 'the lost signal' });
        expect(held.signal.reason).toBeInstanceOf(LockLostError);
        await (await granted).release();
      } finally {
        await holder.close();
        await other.close();
      }
    }, 120_000);
  });

  it("a server that drops the start-up probe's first connection right after its TLS handshake (as a member closing every connection does), and then never answers, fails start-up at connectTimeoutMs, not with a TLS verdict", async () => {
    // The probe sends nothing after its handshake; the C client sends its connect request at once.
    // The first connection still silent after 100 ms is the probe's: dropped. The rest hang.
    const sockets = new Set<TLSSocket>();
    let dropped = 0;
    const server = createTlsServer({ pfx: readFileSync(zk.materials.serverKeystore), passphrase: 'test-store-pw' }, (socket) => {
      socket.on('error', () => undefined);
      sockets.add(socket);
      let spoke = false;
      socket.once('data', () => (spoke = true));
      setTimeout(() => {
        if (spoke || dropped > 0) return;
        dropped += 1;
        socket.destroy();
      }, 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const connection = new ZkConnection({ connectionString: `127.0.0.1:${(server.address() as { port: number }).port}`, tls: zk.side.tls, connectTimeoutMs: 3000 });
    try {
      const error = await connection.connect().then(() => undefined, (e: unknown) => e);
      expect(dropped, 'the probe met a dropped connection').toBe(1);
      expect(error).toBeInstanceOf(ZkConnectionError);
      expect(error).not.toBeInstanceOf(ZkTlsError);
    } finally {
      connection.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 60_000);

  it('the reduced fault suite: a holder\'s server killed, the ensemble restarted, a holder partitioned, a server stalled, a session expired; every lock stays exclusive and fenced, nothing is left behind', async () => {
    const faults = ['kill-server-of-holder', 'restart-ensemble', 'partition-holder-both-ways', 'stall-server-of-holder', 'expire-session-of-holder'];
    const report = await runFaultSuite({ faults, tls: zk, log: (line) => console.log(`[faults tls] ${line}`) });
    console.log(describeReport(report).map((line) => `[faults tls] ${line}`).join('\n'));
    expect(report.result.violations).toEqual([]);
    expect(report.leftovers).toEqual({ nodes: [], watches: 0 });
    expect(report.faultsRun).toEqual(faults);
    expect(report.result.figures.acquisitions).toBeGreaterThan(100);
    // The partition really cut a holder off, and it was told.
    expect(report.partitions).toEqual({ cut: 1, holderTold: 1 });
  }, 600_000);
});

import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FairLock, InvalidOptionsError, ZkConnection, ZkTlsError } from '../../lib/index.js';
import { parseCommand } from '../../lib/cli/args.js';
import { RecipeRuntime } from '../../lib/recipes/recipe-runtime.js';
import { eventually } from '../../lib/testing/zk-session-tools.js';
import { loadNativeModule, type NativeClient, type NativeConfig } from '../../lib/zookeeper/native-client.js';
import { uniqueRoot } from '../support/zk-fixtures.js';
import type { ZkEnsemble, ZkServer } from '../support/zk-server.js';
import { keystoreConfig, makeOtherHostCertificate, type OtherHostCertificate, TEST_STORE_PASSWORD } from '../support/tls-materials.js';
import { tlsZooKeeper, type TlsZooKeeper } from '../support/zk-tls-servers.js';

/*
 * TLS host-name verification (tls.verifyHostname, on by default), done by the C client's own
 * handshake: every connect and reconnect expects the certificate to name the host the server was
 * reached by. First the C client alone against a Node TLS server (which records the SNI it is sent
 * and which handshakes complete), then ZkConnection against a 3-member ensemble whose third member
 * holds a valid certificate for another host.
 */

let zk: TlsZooKeeper;
let elsewhere: OtherHostCertificate;
beforeAll(() => {
  zk = tlsZooKeeper();
  elsewhere = makeOtherHostCertificate(zk.materials);
});
afterAll(() => zk?.remove());

/**
 * A TLS server presenting `keystore` that speaks no ZooKeeper: it counts connections and completed
 * handshakes, and records the SNI names asked for and the alerts of the handshakes a client refused.
 */
async function recordingServer(keystore: string): Promise<{ port: number; tcp: number; secure: number; sni: string[]; alerts: string[]; close(): Promise<void> }> {
  const seen = { port: 0, tcp: 0, secure: 0, sni: [] as string[], alerts: [] as string[], close: (): Promise<void> => Promise.resolve() };
  const server: TlsServer = createTlsServer(
    {
      pfx: readFileSync(keystore),
      passphrase: TEST_STORE_PASSWORD,
      SNICallback: (name, done) => {
        seen.sni.push(name);
        done(null); // the default context: the same certificate whatever the name
      },
    },
    (socket) => {
      seen.secure += 1;
      socket.on('error', () => undefined);
    },
  );
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    seen.tcp += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', (error: NodeJS.ErrnoException) => seen.alerts.push(error.code ?? error.message));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  seen.port = (server.address() as { port: number }).port;
  seen.close = () => {
    // A handshake that completed leaves a connection the closed client may not have ended yet.
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return seen;
}

/** The addon alone (no probe, no ZkConnection), with the good client certificate. */
function nativeClient(port: number, extra: Partial<NativeConfig>): NativeClient {
  const m = zk.materials;
  const config: NativeConfig = {
    connect: `127.0.0.1:${port}`,
    timeout: 6000, // a handshake may take 4 s on a loaded machine before the C client tries again
    debug_level: 0,
    host_order_deterministic: true,
    response_counter_limit: 2_000_000_000,
    cert: `${m.ca},${m.clientCert},${m.clientKey}`,
    ...extra,
  };
  const client = new (loadNativeModule())(config);
  const started = client.native.init(config);
  if (started instanceof Error) throw started;
  return client;
}

describe("the C client's own handshake checks the name the server was reached by", () => {
  /** Runs the C client against a fresh recording server until a handshake completes or two were refused. */
  async function attempt(extra: (port: number) => Partial<NativeConfig>) {
    const server = await recordingServer(elsewhere.keystore);
    const client = nativeClient(server.port, extra(server.port));
    try {
      await eventually(() => server.alerts.length >= 2 || server.secure > 0, { what: 'a handshake completed or two refused', timeoutMs: 30_000 });
      return { secure: server.secure, sni: [...server.sni], alerts: [...server.alerts] };
    } finally {
      client.close();
      await server.close();
    }
  }

  it('reached as localhost, a certificate for another host is refused at every attempt, and SNI says localhost', async () => {
    const seen = await attempt((port) => ({ tls_names: [{ address: '127.0.0.1', port, name: 'localhost' }] }));
    expect(seen.secure).toBe(0);
    expect(seen.alerts.every((alert) => /BAD_CERTIFICATE/.test(alert)), seen.alerts.join()).toBe(true); // the client refused the certificate
    expect(seen.sni.length).toBeGreaterThanOrEqual(2);
    expect(new Set(seen.sni)).toEqual(new Set(['localhost']));
  });

  it('control: the same server reached as the name its certificate holds completes the handshake, with that name as SNI', async () => {
    const seen = await attempt((port) => ({ tls_names: [{ address: '127.0.0.1', port, name: elsewhere.name }] }));
    expect(seen.secure).toBeGreaterThan(0);
    expect(seen.sni).toContain(elsewhere.name);
  });

  it('reached by its IP address (no name given), the certificate must hold that IP: refused, and no SNI is sent', async () => {
    const seen = await attempt(() => ({}));
    expect(seen.secure).toBe(0);
    expect(seen.alerts.every((alert) => /BAD_CERTIFICATE/.test(alert)), seen.alerts.join()).toBe(true);
    expect(seen.sni).toEqual([]);
  });

  it('tls_any_name (tls.verifyHostname: false) accepts a certificate for any host the CA signed', async () => {
    const seen = await attempt(() => ({ tls_any_name: true }));
    expect(seen.secure).toBeGreaterThan(0);
  });
});

describe('a 3-member TLS ensemble whose member 3 holds a valid certificate for another host', () => {
  let ensemble: ZkEnsemble;
  const opened: ZkConnection[] = [];
  beforeAll(async () => {
    // Sessions of 8 s (the test servers' default cap is 4 s), so that a failover under load fits in a holder's lease.
    ensemble = await zk.startEnsemble(3, (id) => ['maxSessionTimeout=20000', ...(id === 3 ? keystoreConfig(elsewhere.keystore) : [])]);
  }, 120_000);
  afterAll(async () => {
    for (const c of opened) c.close();
    await ensemble?.stop();
  });

  const member = (id: number): ZkServer => ensemble.servers[id - 1]!;
  const port = (server: ZkServer): string => zk.side.address(server).split(':')[1]!;
  const connection = (servers: string[], verifyHostname?: boolean): ZkConnection => {
    const c = new ZkConnection({
      connectionString: servers.join(','),
      sessionTimeoutMs: 8000,
      leaseMarginMs: 2000,
      connectTimeoutMs: 15_000,
      tls: { ...zk.side.tls!, ...(verifyHostname === undefined ? {} : { verifyHostname }) },
    });
    opened.push(c);
    return c;
  };
  /**
   * Runs `work` with the servers of every handle opened meanwhile tried in the order given
   * (ZkConnection shuffles them once per handle: here the shuffle leaves them as they are).
   */
  async function inOrder<T>(work: () => Promise<T>): Promise<T> {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.999999);
    try {
      return await work();
    } finally {
      random.mockRestore();
    }
  }
  /** The member whose secure port carries the connection's session, from `cons`. */
  async function serverOf(c: ZkConnection): Promise<ZkServer | undefined> {
    for (const server of ensemble.servers.filter((s) => s.running)) {
      if ((await zk.side.connections(server).catch(() => '')).includes(`sid=0x${c.sessionId}`)) return server;
    }
    return undefined;
  }

  it('start-up through that member alone fails with ZkTlsError hostname-mismatch naming the host reached and the names its certificate holds', async () => {
    const byIp = await connection([zk.side.address(member(3))]).connect().catch((e: unknown) => e);
    expect(byIp).toBeInstanceOf(ZkTlsError);
    expect(byIp).toMatchObject({ failure: 'hostname-mismatch', server: zk.side.address(member(3)) });
    expect((byIp as Error).message).toContain(`DNS:${elsewhere.name}, CN=${elsewhere.name}, not 127.0.0.1`);
    expect((byIp as Error).message).toMatch(/verifyHostname: false/);
    const byName = await connection([`localhost:${port(member(3))}`]).connect().catch((e: unknown) => e);
    expect(byName).toMatchObject({ name: 'ZkTlsError', failure: 'hostname-mismatch', server: `localhost:${port(member(3))} (127.0.0.1)` });
    expect((byName as Error).message).toContain(`not localhost`);
  }, 60_000);

  it('verifyHostname: false connects to it and locks work', async () => {
    const c = connection([zk.side.address(member(3))], false);
    await c.connect();
    const held = await new FairLock(new RecipeRuntime(c, { rootPath: uniqueRoot('tls-any-name') })).acquire('r', { waitTimeoutMs: 10_000 });
    await held.release();
  }, 60_000);

  it('by localhost, every member named as its certificate says: the client connects, to a good member', async () => {
    const c = connection(ensemble.servers.map((s) => `localhost:${port(s)}`));
    await c.connect();
    expect(await eventually(() => serverOf(c), { what: "the client's member" })).not.toBe(member(3));
  }, 60_000);

  it('tried first, the member is refused and the client connects to a good one; control: with verifyHostname false it settles there', async () => {
    const order = [member(3), member(1), member(2)].map((s) => zk.side.address(s));
    const checked = connection(order);
    await inOrder(() => checked.connect());
    expect(await eventually(() => serverOf(checked), { what: "the client's member" })).not.toBe(member(3));
    const unchecked = connection(order, false);
    await inOrder(() => unchecked.connect());
    expect(await eventually(() => serverOf(unchecked), { what: "the control's member" })).toBe(member(3));
  }, 60_000);

  /**
   * Connected to member `from` (the servers in the order: from, member 3, the other good one), with
   * a lock held; `from` is killed, and the C client tries the next server in its list first: member
   * 3. Returns where the session went, and whether the lock stayed held.
   */
  async function failover(verifyHostname: boolean | undefined): Promise<{ to: ZkServer | undefined; heldAfter: boolean }> {
    const leader = await ensemble.leader();
    const from = member(1) === leader ? member(2) : member(1); // a follower: its death needs no election
    const other = from === member(1) ? member(2) : member(1);
    const c = connection([from, member(3), other].map((s) => zk.side.address(s)), verifyHostname);
    const locks = new FairLock(new RecipeRuntime(c, { rootPath: uniqueRoot('tls-failover') }));
    try {
      return await inOrder(async () => {
        await c.connect();
        expect(await eventually(() => serverOf(c), { what: "the client's member" })).toBe(from);
        const held = await locks.acquire('r', { waitTimeoutMs: 10_000 });
        await from.kill();
        const to = await eventually(() => serverOf(c), { what: 'the session on another member', timeoutMs: 30_000, intervalMs: 100 });
        const heldAfter = held.isHeld();
        await held.release();
        const again = await locks.acquire('r', { waitTimeoutMs: 10_000 }); // and locks go on working there
        await again.release();
        return { to, heldAfter };
      });
    } finally {
      c.close();
      await from.start();
    }
  }

  it('the good member the client is on dies: it moves to the other good one, not to member 3, and keeps its lock; control: with verifyHostname false it moves to member 3', async () => {
    const checked = await failover(undefined);
    expect(checked.to?.id).not.toBe(3);
    expect(checked.heldAfter).toBe(true);
    const unchecked = await failover(false);
    expect(unchecked.to?.id).toBe(3);
  }, 180_000);
});

describe('tls.verifyHostname', () => {
  it('is checked at construction: a boolean', () => {
    const m = zk.materials;
    expect(() => new ZkConnection({ connectionString: '127.0.0.1:2181', tls: { ca: m.ca, verifyHostname: 'no' as never } })).toThrow(InvalidOptionsError);
    expect(() => new ZkConnection({ connectionString: '127.0.0.1:2181', tls: { ca: m.ca, verifyHostname: 'no' as never } })).toThrow(/tls\.verifyHostname/);
    expect(new ZkConnection({ connectionString: '127.0.0.1:2181', tls: { ca: m.ca, verifyHostname: false } }).tls).toBe(true);
  });

  it('the CLI turns it off with --tls-any-hostname (which needs --tls-ca)', () => {
    const command = parseCommand(['inspect', '--connect', '127.0.0.1:2181', '--tls-ca', zk.materials.ca, '--tls-any-hostname'], {});
    expect(command).toMatchObject({ name: 'inspect', args: { tls: { ca: zk.materials.ca, verifyHostname: false } } });
    expect(parseCommand(['inspect', '--connect', '127.0.0.1:2181', '--tls-ca', zk.materials.ca], {})).not.toHaveProperty('args.tls.verifyHostname');
    expect(() => parseCommand(['inspect', '--connect', '127.0.0.1:2181', '--tls-any-hostname'], {})).toThrow(/need --tls-ca/);
  });
});

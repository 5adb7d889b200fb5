import 'reflect-metadata';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZkLockHealthIndicator } from '../../lib/health/index.js';
import {
  FairLock,
  InvalidOptionsError,
  LockService,
  ZkConnection,
  ZkConnectionError,
  ZkLockModule,
  ZkTlsError,
  type ZkConnectionOptions,
} from '../../lib/index.js';
import { RecipeRuntime } from '../../lib/recipes/recipe-runtime.js';
import { loadNativeModule, type NativeClient } from '../../lib/zookeeper/native-client.js';
import { parseCommand } from '../../lib/cli/args.js';
import { runInspect } from '../../lib/cli/inspect-command.js';
import { startZkServer, type ZkServer } from '../support/zk-server.js';
import { runTlsMaterials } from '../support/shared-tls-materials.js';
import type { TlsMaterials } from '../support/tls-materials.js';
import { eventLoopGaps, startTlsZkServer, type TlsZkServer } from '../support/zk-tls.js';
import { STEADY_SESSION, uniqueRoot } from '../support/zk-fixtures.js';

/** Sends `text` to an echo server in this process and resolves with what came back. */
async function echoRoundTrip(text: string): Promise<string> {
  const echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  try {
    const socket = connect((echo.address() as { port: number }).port, '127.0.0.1');
    socket.end(text);
    let back = '';
    for await (const chunk of socket) back += String(chunk);
    return back;
  } finally {
    echo.close();
  }
}

/*
 * Event-loop gaps while a TLS start-up fails are measured and printed (the C client's own handshake
 * loop, unpatched, select()s for 1 s at a time, forever against a silent server), not held to a
 * bound: a timing threshold would fail on a busy machine. What the tests hold is that the loop goes
 * on serving other work while the handshake cannot finish, and that each failure is the typed
 * error found by the probe, which by construction answers within connectTimeoutMs.
 */

describe('TLS to a ZooKeeper that listens on a secureClientPort only (client certificates required)', () => {
  let m: TlsMaterials;
  let server: TlsZkServer;
  let plain: ZkServer;
  /** The same, but asking for no client certificate (ssl.clientAuth=none). */
  let noClientAuth: TlsZkServer;
  const opened: ZkConnection[] = [];
  const gaps: Record<string, number> = {};
  /** How long each failing start-up took, in ms (printed, not asserted). */
  const took: Record<string, number> = {};

  beforeAll(async () => {
    m = runTlsMaterials();
    [server, plain, noClientAuth] = await Promise.all([startTlsZkServer(m), startZkServer(), startTlsZkServer(m, 'none')]);
  });
  afterAll(async () => {
    // For comparison with the printed gaps (not a test: it asserts nothing): an idle second's worst gap.
    const idle = eventLoopGaps();
    await new Promise((r) => setTimeout(r, 1000));
    gaps.idleBaseline = Math.round(idle.stop());
    for (const connection of opened) connection.close();
    await Promise.all([server?.stop(), plain?.stop(), noClientAuth?.stop()]);
    if (plain) rmSync(plain.dataDir, { recursive: true, force: true });
    m?.remove(); // the run's shared keys stay for the other files; the run removes them
    expect([server?.dataDir, noClientAuth?.dataDir, plain?.dataDir].filter((dir) => dir && existsSync(dir))).toEqual([]);
    console.log(`TLS tests: keys made with ${m?.madeWith}; worst event-loop gaps (ms): ${JSON.stringify(gaps)}; failing start-ups took (ms): ${JSON.stringify(took)}`);
  });

  const good = () => ({ ca: m.ca, cert: m.clientCert, key: m.clientKey });
  const connection = (options: Partial<ZkConnectionOptions>): ZkConnection => {
    const c = new ZkConnection({ connectionString: server.connectString, ...STEADY_SESSION, ...options });
    opened.push(c);
    return c;
  };

  /** Start-up that must fail: the error, how long it took, and the worst event-loop gap meanwhile. */
  async function failingStart(name: string, options: Partial<ZkConnectionOptions>): Promise<{ error: unknown }> {
    const c = connection(options);
    const gap = eventLoopGaps();
    const started = performance.now();
    const error = await c.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    took[name] = Math.round(performance.now() - started);
    if (error instanceof ZkTlsError) expect(error.message, 'one line, whatever OpenSSL said').not.toMatch(/\n/);
    gaps[name] = Math.round(gap.stop());
    c.close();
    return { error };
  }

  it('connects with a client certificate and takes and releases a fair lock', async () => {
    const c = connection({ tls: good() });
    await c.connect();
    expect(c.tls).toBe(true);
    const runtime = new RecipeRuntime(c, { rootPath: uniqueRoot('tls') });
    const lock = new FairLock(runtime);
    const held = await lock.acquire('tls-resource', { waitTimeoutMs: 5000 });
    expect(held.fencingToken).toMatch(/^\d+$/);
    expect(await lock.tryAcquire('tls-resource')).toBeNull(); // taken, and the queue in ZooKeeper says so
    await held.release();
    const again = await lock.acquire('tls-resource', { waitTimeoutMs: 5000 });
    await again.release();
  });

  it('without a client certificate, to a server that asks for none (ssl.clientAuth=none): tls.ca alone', async () => {
    const c = connection({ connectionString: noClientAuth.connectString, tls: { ca: m.ca } });
    await c.connect();
    expect(c.tls).toBe(true);
    const held = await new FairLock(c).acquire('no-client-cert', { waitTimeoutMs: 5000 });
    expect(held.isHeld()).toBe(true);
    await held.release();
  });

  it('an encrypted key with its passphrase works', async () => {
    const c = connection({ tls: { ca: m.ca, cert: m.clientCert, key: m.clientKeyEncrypted, passphrase: m.passphrase } });
    await c.connect();
    expect(c.state).toBe('connected');
  });

  it('ZkLockModule with tls: LockService locks, sessionInfo() and the health indicator say tls: true', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: server.connectString, ...STEADY_SESSION, shutdownGraceMs: 50, rootPath: uniqueRoot('tlsmod'), tls: good() }),
        TerminusModule,
      ],
      providers: [ZkLockHealthIndicator],
    }).compile();
    const application = moduleRef.createNestApplication({ logger: false });
    await application.init();
    try {
      const locks = application.get(LockService);
      expect(await locks.withLock('report', (lock) => lock.fencingToken)).toMatch(/^\d+$/);
      expect(locks.sessionInfo()).toMatchObject({ state: 'connected', tls: true, addon: 'nestjs-zk-lock' });
      const health = application.get(ZkLockHealthIndicator).isHealthy('zookeeper');
      expect(health.zookeeper).toMatchObject({ status: 'up', tls: true });
    } finally {
      await application.close();
    }
  });

  it('the inspect CLI reads the locks over TLS and says so (--tls-ca/--tls-cert/--tls-key, passphrase from the environment)', async () => {
    const command = parseCommand(
      ['inspect', '--connect', server.connectString, '--root', uniqueRoot('tlscli'), '--tls-ca', m.ca, '--tls-cert', m.clientCert, '--tls-key', m.clientKeyEncrypted, '--timeout', '5000'],
      { ZK_LOCK_TLS_PASSPHRASE: m.passphrase },
    );
    if (command.name !== 'inspect') throw new Error('not inspect');
    let out = '';
    await runInspect(command.args, { out: (t) => (out += t), err: (t) => (out += t) }, new AbortController().signal);
    expect(out).toMatch(/^0 locks under \/test-.* over TLS/);
    let json = '';
    await runInspect({ ...command.args, json: true }, { out: (t) => (json += t), err: (t) => (json += t) }, new AbortController().signal);
    expect(JSON.parse(json)).toMatchObject({ tls: true, locks: [] });
  });

  it("a wrong CA fails with ZkTlsError server-not-trusted (the probe's verdict, not the timeout)", async () => {
    const { error } = await failingStart('wrongCa', { tls: { ...good(), ca: m.otherCa }, connectTimeoutMs: 8000 });
    expect(error).toBeInstanceOf(ZkTlsError);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect(error).toMatchObject({ failure: 'server-not-trusted', server: server.connectString });
    expect((error as Error).message).toMatch(/tls\.ca/);
  });

  it('no client certificate, where the server requires one, fails with ZkTlsError client-refused', async () => {
    const { error } = await failingStart('noClientCert', { tls: { ca: m.ca }, connectTimeoutMs: 8000 });
    expect(error).toBeInstanceOf(ZkTlsError);
    expect(error).toMatchObject({ failure: 'client-refused' });
    expect((error as Error).message).toMatch(/tls\.cert and tls\.key/);
  });

  it('a client certificate the server does not trust fails with ZkTlsError client-refused', async () => {
    const { error } = await failingStart('rogueClientCert', { tls: { ca: m.ca, cert: m.rogueCert, key: m.rogueKey }, connectTimeoutMs: 8000 });
    expect(error).toMatchObject({ name: 'ZkTlsError', failure: 'client-refused' });
  });

  it('a plain connection to the TLS port fails within connectTimeoutMs with ZkTlsError tls-required', async () => {
    const { error } = await failingStart('plainToTls', { connectTimeoutMs: 3000 });
    expect(error).toBeInstanceOf(ZkTlsError);
    expect(error).toMatchObject({ failure: 'tls-required' });
    expect((error as Error).message).toMatch(/set the tls option/);
  });

  it('TLS to a plain clientPort fails with ZkTlsError not-tls', async () => {
    const { error } = await failingStart('tlsToPlain', { connectionString: plain.connectString, tls: good(), connectTimeoutMs: 8000 });
    expect(error).toBeInstanceOf(ZkTlsError);
    expect(error).toMatchObject({ failure: 'not-tls' });
  });

  describe('a server that accepts connections and never answers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('start-up fails with a connection timeout (not a TLS verdict) when the server never answers the handshake', async () => {
      const port = (silent.address() as { port: number }).port;
      const { error } = await failingStart('silentServer', { connectionString: `127.0.0.1:${port}`, tls: good(), connectTimeoutMs: 2500 });
      expect(error).toBeInstanceOf(ZkConnectionError);
      expect(error).not.toBeInstanceOf(ZkTlsError);
    });

    it('the C client alone (no probe) times a silent handshake out and tries again, without blocking', async () => {
      const port = (silent.address() as { port: number }).port;
      const client = nativeClient(`127.0.0.1:${port}`, `${m.ca},${m.clientCert},${m.clientKey}`, 600);
      const gap = eventLoopGaps();
      let accepted = sockets.size;
      const acceptedAtLeast = (n: number): Promise<void> =>
        new Promise((resolve) => {
          const check = (): void => {
            if (accepted >= n) {
              silent.off('connection', onConnection);
              resolve();
            }
          };
          const onConnection = (): void => {
            accepted += 1;
            check();
          };
          silent.on('connection', onConnection);
          check();
        });
      try {
        // The C client is in its handshake with a server that never answers (the unpatched client
        // select()s there forever, holding the loop): the loop must still serve a TCP round trip.
        await acceptedAtLeast(1);
        expect(await echoRoundTrip('during the handshake')).toBe('during the handshake');
        // Each attempt times out after two thirds of the 600 ms timeout and a new one begins.
        await acceptedAtLeast(2);
      } finally {
        client.close();
        gaps.nativeSilent = Math.round(gap.stop());
      }
    });
  });

  it('the C client alone, with a wrong CA, keeps failing the handshake without blocking and never connects', async () => {
    const client = nativeClient(server.connectString, `${m.otherCa},${m.clientCert},${m.clientKey}`, 2000);
    let connected = false;
    client.on('connect', () => (connected = true));
    const gap = eventLoopGaps();
    await new Promise((r) => setTimeout(r, 2000));
    client.close();
    gaps.nativeWrongCa = Math.round(gap.stop());
    expect(connected).toBe(false);
  });

  it('the C client alone connects with the right files (no probe involved)', async () => {
    const client = nativeClient(server.connectString, `${m.ca},${m.clientCert},${m.clientKey}`, 2000);
    try {
      // Its connect event, however long a loaded machine takes (the test's timeout bounds it).
      await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      expect(client.native.state).toBe(3); // ZOO_CONNECTED_STATE
    } finally {
      client.close();
    }
  });

  describe('the tls option is checked at construction', () => {
    const invalid = (tls: unknown): InvalidOptionsError => {
      try {
        new ZkConnection({ connectionString: '127.0.0.1:2181', tls: tls as never });
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidOptionsError);
        return error as InvalidOptionsError;
      }
      throw new Error('no error');
    };

    it('commas, missing files, lone cert or key, passphrase without key, unknown fields', () => {
      expect(invalid({ ca: `${m.dir}/a,b.pem` })).toMatchObject({ option: 'tls.ca', message: expect.stringMatching(/comma/) });
      expect(invalid({ ...good(), passphrase: 'a,b' })).toMatchObject({ option: 'tls.passphrase', message: expect.stringMatching(/comma/) });
      expect(invalid({ ca: join(m.dir, 'missing.pem') })).toMatchObject({ option: 'tls.ca', message: expect.stringMatching(/ENOENT/) });
      expect(invalid({ ca: m.dir })).toMatchObject({ option: 'tls.ca' });
      expect(invalid({ ca: m.ca, cert: m.clientCert })).toMatchObject({ option: 'tls.key', message: expect.stringMatching(/go together/) });
      expect(invalid({ ca: m.ca, key: m.clientKey })).toMatchObject({ option: 'tls.cert' });
      expect(invalid({ ca: m.ca, passphrase: 'x' })).toMatchObject({ option: 'tls.passphrase' });
      expect(invalid({ cert: m.clientCert, key: m.clientKey })).toMatchObject({ option: 'tls.ca', message: expect.stringMatching(/required/) });
      expect(invalid({ ...good(), keystore: 'x' })).toMatchObject({ option: 'tls.keystore' });
      expect(invalid('yes')).toMatchObject({ option: 'tls' });
    });

    it('unreadable PEM, an encrypted key without or with a wrong passphrase, a key of another certificate', () => {
      const notPem = join(mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-not-pem-')), 'not.pem');
      writeFileSync(notPem, 'hello');
      expect(invalid({ ca: notPem })).toMatchObject({ option: 'tls.ca', message: expect.stringMatching(/PEM/) });
      expect(invalid({ ca: m.ca, cert: m.clientCert, key: m.clientKeyEncrypted })).toMatchObject({ option: 'tls.passphrase' });
      expect(invalid({ ca: m.ca, cert: m.clientCert, key: m.clientKeyEncrypted, passphrase: 'wrong' })).toMatchObject({ option: 'tls.key', message: expect.stringMatching(/passphrase/) });
      expect(invalid({ ca: m.ca, cert: m.clientCert, key: m.rogueKey })).toMatchObject({ option: 'tls.key', message: expect.stringMatching(/not the private key/) });
    });
  });
});

/** The addon on its own, with zookeeper_init_ssl's string: no probe, no ZkConnection. */
function nativeClient(connect: string, cert: string, timeout: number): NativeClient {
  const Native = loadNativeModule();
  const config = { connect, timeout, debug_level: 0, host_order_deterministic: true, response_counter_limit: 2_000_000_000, cert };
  const client = new Native(config);
  const started = client.native.init(config);
  if (started instanceof Error) throw started;
  return client;
}

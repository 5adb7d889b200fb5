import 'reflect-metadata';
import { createConnection, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, LockLostError, ZkConnectionError, ZkSaslError, type ZkLockModuleOptions } from '../../lib/index.js';
import { digestId, ZK_PERMS } from '../../lib/zookeeper/zk-acl.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.options.js';
import { ZkNoAuthError } from '../../lib/zookeeper/zk-errors.js';
import { startLockApp } from '../support/lock-app.js';
import { childrenOf, eventually, uniqueRoot } from '../support/zk-fixtures.js';
import { startZkProxy, type ZkProxy } from '../support/zk-proxy.js';
import { type SaslServer, startSaslServer } from '../support/zk-sasl-server.js';

const ALICE = { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } as const;
const BOB = { mechanism: 'DIGEST-MD5', username: 'bob', password: 'bob-secret' } as const;
const USERS = { alice: ALICE.password, bob: BOB.password };
/** Owner: all rights for the SASL identity as the server names it; everyone reads. */
const ALICE_ACL = [
  { scheme: 'sasl', id: 'alice', perms: ZK_PERMS.ALL },
  { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
];

describe('SASL DIGEST-MD5 against a server that requires it (zookeeper.sessionRequireClientSASLAuth=true)', () => {
  let server: SaslServer;
  const zk = { connectString: '', server: undefined };
  const opened: ZkConnection[] = [];

  beforeAll(async () => {
    server = await startSaslServer({ users: USERS });
    zk.connectString = server.connectString;
  });
  afterAll(async () => {
    for (const connection of opened) connection.close();
    await server.stop();
  });

  async function connect(options: Partial<ZkConnectionOptions> = {}): Promise<ZkConnection> {
    const connection = new ZkConnection({ connectionString: zk.connectString, sessionTimeoutMs: 4000, ...options });
    opened.push(connection);
    await connection.connect();
    return connection;
  }
  const service = (options: Partial<ZkLockModuleOptions>) => startLockApp(zk, { sessionTimeoutMs: 4000, ...options });

  it('a lock round trip as a SASL user: every lock path is created with the ACL of the SASL identity, which another SASL user cannot delete', async () => {
    const rootPath = uniqueRoot('sasl');
    const app = await service({ rootPath, sasl: ALICE, rootAclCheck: 'error' });
    const held = await app.locks.acquire('orders:1');
    const ownerConnection = await connect({ sasl: ALICE });
    const owner = await ownerConnection.session();
    const [node] = (await owner.getChildren(`${rootPath}/orders:1`)).children;
    // The server names the session's identity sasl:alice: it authenticated as alice.
    for (const path of [rootPath, `${rootPath}/orders:1`, `${rootPath}/orders:1/${node}`]) expect(await owner.getAcl(path)).toEqual(ALICE_ACL);
    const bob = await (await connect({ sasl: BOB })).session();
    await expect(bob.delete(`${rootPath}/orders:1/${node}`)).rejects.toBeInstanceOf(ZkNoAuthError);
    await expect(bob.setData(`${rootPath}/orders:1/${node}`, Buffer.from('x'))).rejects.toBeInstanceOf(ZkNoAuthError);
    await held.release();
    expect(await childrenOf(ownerConnection, `${rootPath}/orders:1`)).toEqual([]);
    await app.application.close();
  });

  it('start-up fails with ZkSaslError saying which: a wrong password (rejected), no sasl option (required); an unknown mechanism is refused before connecting', async () => {
    // connectTimeoutMs far above the test's own timeout: only the server's answer can end these.
    const wrong = await connect({ sasl: { ...ALICE, password: 'not-it' }, connectTimeoutMs: 600_000 }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ZkSaslError);
    expect(wrong).toBeInstanceOf(ZkConnectionError);
    expect((wrong as ZkSaslError).failure).toBe('rejected');
    expect((wrong as Error).message).toMatch(/refused DIGEST-MD5 for user "alice".*sasl\.username and sasl\.password/);
    const none = await connect({ connectTimeoutMs: 600_000 }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(ZkSaslError);
    expect((none as ZkSaslError).failure).toBe('required');
    expect((none as Error).message).toMatch(/requires SASL.*Set the sasl option/);
    // Through the module too: start-up (onModuleInit) fails with the same error.
    await expect(service({ rootPath: uniqueRoot('nosasl'), connectTimeoutMs: 600_000 })).rejects.toBeInstanceOf(ZkSaslError);
    expect(() => new ZkConnection({ connectionString: zk.connectString, sasl: { mechanism: 'PLAIN', username: 'a', password: 'b' } as never })).toThrow(
      InvalidOptionsError,
    );
    expect(() => new ZkConnection({ connectionString: zk.connectString, sasl: { ...ALICE, principal: 'x' } as never })).toThrow(/sasl\.principal.*not an option of SASL DIGEST-MD5/);
    expect(() => new ZkConnection({ connectionString: zk.connectString, sasl: { ...ALICE, password: '' } })).toThrow(/sasl\.password/);
  });

  it('a dropped connection authenticates again on the same session: held locks stay held and new ones are taken', async () => {
    const proxy: ZkProxy = await startZkProxy({ port: server.clientPort });
    try {
      const rootPath = uniqueRoot('resume');
      const connection = await connect({ connectionString: proxy.connectString, sasl: ALICE });
      const app = await service({ rootPath, connection });
      const held = await app.locks.acquire('a');
      const sessionId = connection.sessionId;
      const states: string[] = [];
      connection.onStateChange((state) => states.push(state));
      proxy.dropConnections();
      await eventually(() => states.includes('reconnected'), { what: 'the session to reconnect' });
      // The server closes a connection that sends anything before authenticating: this works only
      // because the client authenticated again.
      const next = await app.locks.acquire('b');
      expect(connection.sessionId).toBe(sessionId);
      expect(held.signal.aborted).toBe(false);
      await next.release();
      await held.release();
      await app.application.close();
    } finally {
      await proxy.close();
    }
  });

  it('a new session after the old one expired authenticates again', async () => {
    const proxy: ZkProxy = await startZkProxy({ port: server.clientPort });
    try {
      const rootPath = uniqueRoot('expiry');
      const connection = await connect({ connectionString: proxy.connectString, sasl: ALICE, sessionTimeoutMs: 1000 });
      const app = await service({ rootPath, connection });
      const held = await app.locks.acquire('a');
      const first = connection.sessionId;
      proxy.partition('both');
      await expect(new Promise((_, reject) => held.signal.addEventListener('abort', () => reject(held.signal.reason)))).rejects.toBeInstanceOf(LockLostError);
      // The server expires the silent session meanwhile; the new one must authenticate to be let in.
      await eventually(async () => !(await server.fourLetter('dump')).includes(`0x${first}`), { what: 'the server to expire the session', timeoutMs: 20_000 });
      proxy.partition('none');
      const again = await app.locks.acquire('a');
      expect(connection.sessionId).not.toBe(first);
      const owner = await (await connect({ sasl: ALICE })).session();
      expect(await owner.getAcl(`${rootPath}/a`)).toEqual(ALICE_ACL);
      await again.release();
      await app.application.close();
    } finally {
      await proxy.close();
    }
  });

  it('a server restarted with other credentials: held locks are lost through their signal; restarted with the right ones, locks work again', async () => {
    const rootPath = uniqueRoot('rotate');
    const connection = await connect({ sasl: ALICE });
    const app = await service({ rootPath, connection });
    const held = await app.locks.acquire('a');
    const lost = new Promise<unknown>((resolve) => held.signal.addEventListener('abort', () => resolve(held.signal.reason)));
    server.setUsers({ ...USERS, alice: 'rotated' });
    await server.stop();
    await server.start();
    expect(await lost).toBeInstanceOf(LockLostError);
    server.setUsers(USERS);
    await server.stop();
    await server.start();
    const again = await app.locks.acquire('a', { waitTimeoutMs: 30_000 });
    await again.release();
    await app.application.close();
  });

  it('sasl with digest: lock paths name both identities; the acl option still decides when given', async () => {
    const rootPath = uniqueRoot('both');
    const app = await service({ rootPath, sasl: ALICE, digest: 'orders:pw' });
    const held = await app.locks.acquire('x');
    const owner = await (await connect({ sasl: ALICE })).session();
    expect(await owner.getAcl(`${rootPath}/x`)).toEqual([
      { scheme: 'sasl', id: 'alice', perms: ZK_PERMS.ALL },
      { scheme: 'digest', id: digestId('orders:pw'), perms: ZK_PERMS.ALL },
      { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
    ]);
    await held.release();
    await app.application.close();
    const explicit = [{ scheme: 'sasl', id: 'bob', perms: ZK_PERMS.ALL }, { scheme: 'sasl', id: 'alice', perms: ZK_PERMS.ALL }];
    const explicitRoot = uniqueRoot('explicit');
    const shared = await service({ rootPath: explicitRoot, sasl: ALICE, acl: explicit, rootAclCheck: 'off' });
    const lock = await shared.locks.acquire('y');
    expect(await owner.getAcl(`${explicitRoot}/y`)).toEqual(explicit);
    await lock.release();
    await shared.application.close();
  });

  it("a server that cannot prove it knows the password (its rspauth altered on the way) is refused: ZkSaslError client-failed", async () => {
    // A relay that changes one digit of the server's rspauth: the server is real, only its proof is wrong.
    let tamper = true;
    const relay: Server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: server.clientPort });
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        const at = chunk.indexOf('rspauth=');
        if (at >= 0 && tamper) chunk[at + 8] = chunk[at + 8] === 0x30 ? 0x31 : 0x30;
        client.write(chunk);
      });
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const port = (relay.address() as { port: number }).port;
      const error = await connect({ connectionString: `127.0.0.1:${port}`, sasl: ALICE, connectTimeoutMs: 600_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ZkSaslError);
      expect((error as ZkSaslError).failure).toBe('client-failed');
      expect((error as Error).message).toMatch(/did not prove that it knows the DIGEST-MD5 password/);
      // Control: the same relay without the change lets the client in.
      tamper = false;
      expect(await connect({ connectionString: `127.0.0.1:${port}`, sasl: ALICE })).toBeInstanceOf(ZkConnection);
    } finally {
      relay.close();
    }
  });
});

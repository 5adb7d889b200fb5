/**
 * What a secured server answers is named: a real ZooKeeper that closes every session that has not
 * authenticated (enforce.auth.enabled, here with the digest scheme, which needs no JAAS) answers a
 * client without credentials with SESSIONCLOSEDREQUIRESASLAUTH (-124). Start-up fails with a
 * ZkSaslError saying so, whether connect's probe or start-up's own request meets the refusal; the
 * same server serves a client with the credentials (the control). (A lock meeting it is the unit
 * test's: connect no longer lets such a client start.) The session the failed connect opened ends
 * with it: nothing goes on using it, and connect() can be tried again.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService, ZkSaslError, ZkConnectionError, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { startZkProxy } from '../support/zk-proxy.js';
import { startZkServer, type ZkServer } from '../support/zk-server.js';
import { uniqueRoot } from '../support/zk-fixtures.js';

describe('a server that requires authentication', () => {
  let server: ZkServer;
  beforeAll(async () => {
    // Unknown zoo.cfg keys become zookeeper.* system properties: zookeeper.enforce.auth.enabled.
    server = await startZkServer({ extraConfig: ['enforce.auth.enabled=true', 'enforce.auth.schemes=digest'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function app(options: Partial<ZkLockModuleOptions>) {
    const ref = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: server.connectString, sessionTimeoutMs: 4000, rootPath: uniqueRoot('authreq'), ...options })],
    }).compile();
    return ref.createNestApplication({ logger: false });
  }

  it('fails start-up without credentials, with a ZkSaslError that names the answer', async () => {
    const application = await app({});
    const error = await application.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    await application.close();
    expect(error).toBeInstanceOf(ZkSaslError);
    expect(error).toBeInstanceOf(ZkConnectionError);
    expect(error).toMatchObject({ failure: 'required' });
    expect((error as Error).message).toMatch(/SASL authentication failed \(required: the server closed the session because it requires/);
  });

  it('fails start-up the same way when the refusal answers start-up\'s own request (no ensemble config watch)', async () => {
    const application = await app({ followEnsembleConfig: false });
    const error = await application.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    await application.close();
    expect(error).toBeInstanceOf(ZkSaslError);
    expect(error).toMatchObject({ failure: 'required' });
  });

  it('ends the session the failed connect opened: no live session, session() and a lock get the refusal, a retry meets it again', async () => {
    // The server opens the session, then refuses its first request: connect() has a session when it fails.
    const connection = new ZkConnection({ connectionString: server.connectString, sessionTimeoutMs: 4000 });
    const opened: string[] = [];
    connection.onStateChange((state, id) => state === 'connected' && opened.push(id));
    try {
      const refused = await connection.connect().then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(ZkSaslError);
      expect(opened).toHaveLength(1);
      expect(connection.live).toBeUndefined();
      expect(connection.state).toBe('connecting');
      await expect(connection.session()).rejects.toBe(refused);
      const lock = new FairLock(connection, { rootPath: uniqueRoot('authreq') });
      await expect(lock.acquire('orders', { waitTimeoutMs: 2000 })).rejects.toBe(refused);
      // A retry opens a new session, and meets the same refusal rather than taking the ended one.
      const again = await connection.connect().then(() => undefined, (e: unknown) => e);
      expect(again).toBeInstanceOf(ZkSaslError);
      expect(opened).toHaveLength(2);
      expect(connection.live).toBeUndefined();
      await expect(connection.session()).rejects.toBe(again);
    } finally {
      connection.close();
    }
    await expect(connection.session()).rejects.toThrow(/the connection was closed/);
  });

  it('asks again when the connection drops before the refusal comes back', async () => {
    // The server closes the connection as it answers: its answer held back, the client sees a
    // connection loss, then resumes the session, and the question asked again meets the refusal.
    const proxy = await startZkProxy({ port: Number(server.connectString.split(':')[1]) });
    const connection = new ZkConnection({ connectionString: proxy.connectString, sessionTimeoutMs: 4000 });
    const states: string[] = [];
    connection.onStateChange((state) => {
      states.push(state);
      if (state === 'connected') proxy.partition('to-client');
      if (state === 'suspended') proxy.partition('none');
    });
    try {
      await expect(connection.connect()).rejects.toBeInstanceOf(ZkSaslError);
      expect(states.slice(0, 3)).toEqual(['connected', 'suspended', 'reconnected']);
    } finally {
      connection.close();
      await proxy.close();
    }
  });

  it('serves a client that authenticates (the control)', async () => {
    const application = await app({ digest: 'orders-app:s3cret' });
    await application.init();
    try {
      expect(await application.get(LockService).withLock('orders', (lock) => lock.fencingToken)).toMatch(/^\d{40}$/);
    } finally {
      await application.close();
    }
  });
});

/**
 * What a secured server answers is named: a real ZooKeeper that closes every session that has not
 * authenticated (enforce.auth.enabled, here with the digest scheme, which needs no JAAS) answers a
 * client without credentials with SESSIONCLOSEDREQUIRESASLAUTH (-124). Start-up fails with a
 * ZkSaslError saying so, whether connect's probe or start-up's own request meets the refusal; the
 * same server serves a client with the credentials (the control). (A lock meeting it is the unit
 * test's: connect no longer lets such a client start.)
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService, ZkSaslError, ZkConnectionError, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
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

/**
 * SASL over TLS, the usual production set-up: DIGEST-MD5 on a server's secureClientPort (client
 * certificates required), through the C client's TLS and SASL together (zoo_nzl_init_ssl_sasl).
 */
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZkSaslError } from '../../lib/index.js';
import { ZK_PERMS } from '../../lib/zookeeper/zk-acl.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.options.js';
import { uniqueRoot } from '../support/zk-fixtures.js';
import { saslServerSetup } from '../support/zk-sasl-server.js';
import type { ZkServer } from '../support/zk-server.js';
import { type TlsZooKeeper, tlsZooKeeper } from '../support/zk-tls-servers.js';

const ALICE = { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' } as const;

describe('SASL DIGEST-MD5 over TLS', () => {
  let tls: TlsZooKeeper;
  let server: ZkServer;
  const opened: ZkConnection[] = [];

  beforeAll(async () => {
    tls = tlsZooKeeper();
    const sasl = saslServerSetup({ users: { alice: ALICE.password } });
    // The TLS servers take no JVM flags of their own: Java's launcher adds these to the server's.
    const before = process.env.JDK_JAVA_OPTIONS;
    process.env.JDK_JAVA_OPTIONS = sasl.jvmFlags.join(' ');
    try {
      server = await tls.startServer(sasl.extraConfig);
    } finally {
      if (before === undefined) delete process.env.JDK_JAVA_OPTIONS;
      else process.env.JDK_JAVA_OPTIONS = before;
    }
  });
  afterAll(async () => {
    for (const connection of opened) connection.close();
    await server?.stop();
    tls?.remove();
  });

  async function connect(options: Partial<ZkConnectionOptions>): Promise<ZkConnection> {
    const connection = new ZkConnection({ connectionString: tls.side.address(server), tls: tls.side.tls, connectTimeoutMs: 600_000, ...options });
    opened.push(connection);
    await connection.connect();
    return connection;
  }

  it('authenticates over TLS: paths created with the owner ACL carry sasl:alice (and the certificate\'s x509 identity); a wrong password is refused; without sasl the server says it requires it', async () => {
    const connection = await connect({ sasl: ALICE });
    expect(connection.tls).toBe(true);
    const session = await connection.session();
    const path = uniqueRoot('sasl-tls');
    await session.create(path, '', 'PERSISTENT', [{ scheme: 'auth', id: '', perms: ZK_PERMS.ALL }]);
    // `auth` stands for every identity of the session: the SASL user, and the client certificate's
    // (x509, as the server names it), both authenticated.
    const acl = await session.getAcl(path);
    expect(acl).toContainEqual({ scheme: 'sasl', id: 'alice', perms: ZK_PERMS.ALL });
    expect(acl.map((entry) => entry.scheme).sort()).toEqual(['sasl', 'x509']);
    const wrong = await connect({ sasl: { ...ALICE, password: 'not-it' } }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ZkSaslError);
    expect((wrong as ZkSaslError).failure).toBe('rejected');
    const none = await connect({}).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(ZkSaslError);
    expect((none as ZkSaslError).failure).toBe('required');
  });
});

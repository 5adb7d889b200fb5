/**
 * SASL GSSAPI (Kerberos) against a real KDC and a ZooKeeper server that authenticates with its own
 * keytab (JAAS Krb5LoginModule). The KDC comes from Debian's krb5-kdc, which scripts/ensure-kerberos.sh
 * installs (npm test's pretest; alone: `npm run test:kerberos`).
 */
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionsError, ZkSaslError } from '../../lib/index.js';
import { ZK_PERMS } from '../../lib/zookeeper/zk-acl.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.options.js';
import { type Kdc, startKdc } from '../support/kdc.js';
import { startLockApp } from '../support/lock-app.js';
import { uniqueRoot } from '../support/zk-fixtures.js';
import { type SaslServer, startSaslServer } from '../support/zk-sasl-server.js';

describe('SASL GSSAPI (Kerberos) against a KDC and a ZooKeeper server with its keytab', () => {
  let kdc: Kdc;
  let server: SaslServer;
  let clientKeytab: string;
  const zk = { connectString: '', server: undefined };
  const opened: ZkConnection[] = [];
  let principal: string;
  const krb5Config = process.env.KRB5_CONFIG;

  beforeAll(async () => {
    kdc = await startKdc();
    // This process's Kerberos library reads the realm from here (MIT reads it at each use).
    process.env.KRB5_CONFIG = kdc.krb5Conf;
    const serverPrincipal = `zookeeper/localhost@${kdc.realm}`;
    const serverKeytab = kdc.addPrincipal(serverPrincipal);
    principal = `orders@${kdc.realm}`;
    clientKeytab = kdc.addPrincipal(principal);
    server = await startSaslServer({ kerberos: { keytab: serverKeytab, principal: serverPrincipal, krb5Conf: kdc.krb5Conf } });
    // The servers' principal names them `localhost`: the client asks for the name it connects by.
    zk.connectString = `localhost:${server.clientPort}`;
  });
  afterAll(async () => {
    for (const connection of opened) connection.close();
    await server?.stop();
    await kdc?.stop();
    if (krb5Config === undefined) delete process.env.KRB5_CONFIG;
    else process.env.KRB5_CONFIG = krb5Config;
  });

  async function connect(options: Partial<ZkConnectionOptions>): Promise<ZkConnection> {
    const connection = new ZkConnection({ connectionString: zk.connectString, sessionTimeoutMs: 4000, connectTimeoutMs: 600_000, ...options });
    opened.push(connection);
    await connection.connect();
    return connection;
  }

  it('a lock round trip as a Kerberos principal with its keytab; lock paths carry the principal as the server names it', async () => {
    const rootPath = uniqueRoot('krb');
    const sasl = { mechanism: 'GSSAPI', principal, keytab: clientKeytab } as const;
    const app = await startLockApp(zk, { rootPath, sasl, sessionTimeoutMs: 4000, rootAclCheck: 'error' });
    const held = await app.locks.acquire('orders:1');
    const owner = await (await connect({ sasl })).session();
    expect(await owner.getAcl(`${rootPath}/orders:1`)).toEqual([
      { scheme: 'sasl', id: principal, perms: ZK_PERMS.ALL },
      { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
    ]);
    await held.release();
    await app.application.close();
  });

  it('fails clearly: a missing keytab at construction, a principal not in the keytab, a service principal the KDC does not know, DIGEST-MD5 to a Kerberos server', async () => {
    expect(() => new ZkConnection({ connectionString: zk.connectString, sasl: { mechanism: 'GSSAPI', principal, keytab: `${clientKeytab}.missing` } })).toThrow(
      InvalidOptionsError,
    );
    const stranger = await connect({ sasl: { mechanism: 'GSSAPI', principal: `nobody@${kdc.realm}`, keytab: clientKeytab } }).catch((e: unknown) => e);
    expect(stranger).toBeInstanceOf(ZkSaslError);
    expect((stranger as ZkSaslError).failure).toBe('client-failed');
    expect((stranger as Error).message).toMatch(/no Kerberos credentials for nobody@NZL\.TEST in the keytab/);
    const elsewhere = await connect({ sasl: { mechanism: 'GSSAPI', principal, keytab: clientKeytab, serviceHost: 'elsewhere' } }).catch((e: unknown) => e);
    expect(elsewhere).toBeInstanceOf(ZkSaslError);
    expect((elsewhere as Error).message).toMatch(/zookeeper\/elsewhere.*not found in Kerberos database/i);
    const digest = await connect({ sasl: { mechanism: 'DIGEST-MD5', username: 'orders', password: 'x' } }).catch((e: unknown) => e);
    expect(digest).toBeInstanceOf(ZkSaslError);
    expect((digest as ZkSaslError).failure).toBe('rejected');
  });
});

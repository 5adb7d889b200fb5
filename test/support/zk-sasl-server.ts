/**
 * ZooKeeper test servers that authenticate clients with SASL, configured as production ensembles
 * are: a JAAS `Server` section (DigestLoginModule users, or Krb5LoginModule with the server's keytab),
 * the SASL authentication provider (so that `sasl` ACLs work), and, unless told otherwise,
 * `zookeeper.sessionRequireClientSASLAuth=true` (a session that has not authenticated is closed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startZkServer, type ZkServer } from './zk-server.js';

/** The test servers' JVM flags (lib/testing/zk-test-server.ts), plus SASL's. */
const JVM_FLAGS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

export interface SaslServerOptions {
  /** DigestLoginModule users, name to password. */
  users?: Record<string, string>;
  /** Kerberos instead: Krb5LoginModule with this keytab and principal, and this krb5.conf. */
  kerberos?: { keytab: string; principal: string; krb5Conf: string };
  /** Close sessions that have not authenticated with SASL. @default true */
  requireSasl?: boolean;
}

export interface SaslServer extends ZkServer {
  /** Rewrites the JAAS users; a restart (stop, start) makes the server use them. */
  setUsers(users: Record<string, string>): void;
  /** The server log, for what it says about authentications. */
  readonly log: string;
}

function jaas(options: SaslServerOptions): string {
  if (options.kerberos) {
    const { keytab, principal } = options.kerberos;
    return `Server {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  storeKey=true\n  useTicketCache=false\n  keyTab="${keytab}"\n  principal="${principal}";\n};\n`;
  }
  const users = Object.entries(options.users ?? {}).map(([name, password]) => `  user_${name}="${password}"`);
  return `Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n${users.join('\n')};\n};\n`;
}

/** What a server needs for SASL: its JVM flags (the JAAS file, written now), zoo.cfg lines, and how to change its users. */
export function saslServerSetup(options: SaslServerOptions): { jvmFlags: string[]; extraConfig: string[]; setUsers(users: Record<string, string>): void } {
  const dir = mkdtempSync(join(tmpdir(), 'zk-sasl-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const jaasFile = join(dir, 'jaas.conf');
  writeFileSync(jaasFile, jaas(options));
  return {
    jvmFlags: [
      `-Djava.security.auth.login.config=${jaasFile}`,
      ...(options.requireSasl === false ? [] : ['-Dzookeeper.sessionRequireClientSASLAuth=true']),
      ...(options.kerberos ? [`-Djava.security.krb5.conf=${options.kerberos.krb5Conf}`, '-Dsun.security.krb5.disableReferrals=true'] : []),
    ],
    extraConfig: ['authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider'],
    setUsers: (users) => writeFileSync(jaasFile, jaas({ ...options, users })),
  };
}

/** Starts a standalone server with SASL; stop it in afterAll (its JAAS directory goes with the process). */
export async function startSaslServer(options: SaslServerOptions): Promise<SaslServer> {
  const setup = saslServerSetup(options);
  const server = await startZkServer({ jvmFlags: [...JVM_FLAGS, ...setup.jvmFlags], extraConfig: setup.extraConfig });
  return Object.assign(server, { setUsers: setup.setUsers, log: join(server.dataDir, 'server.log') });
}

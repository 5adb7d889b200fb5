/**
 * A Kerberos realm for the tests: MIT's KDC (Debian's krb5-kdc, see scripts/ensure-kerberos.sh) on a
 * free 127.0.0.1 port, with its database, krb5.conf and keytabs in a temporary directory. Nothing
 * of the machine's Kerberos configuration is read or changed: the KDC and kadmin.local get their
 * own profile, and the clients (this process through KRB5_CONFIG, Java through
 * java.security.krb5.conf) the realm's krb5.conf.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './zk-server.js';

export const REALM = 'NZL.TEST';
const SBIN = ['/usr/sbin', '/sbin'];

export interface Kdc {
  readonly realm: string;
  readonly dir: string;
  /** The krb5.conf of the realm, for KRB5_CONFIG and java.security.krb5.conf. */
  readonly krb5Conf: string;
  /** Adds a principal with a random key and writes its key to a new keytab; returns the keytab's path. */
  addPrincipal(principal: string): string;
  stop(): Promise<void>;
}

export async function startKdc(): Promise<Kdc> {
  const dir = mkdtempSync(join(tmpdir(), 'nzl-kdc-'));
  const [port] = await freePorts(1);
  const krb5Conf = join(dir, 'krb5.conf');
  writeFileSync(
    krb5Conf,
    `[libdefaults]
  default_realm = ${REALM}
  dns_lookup_realm = false
  dns_lookup_kdc = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
[realms]
  ${REALM} = {
    kdc = 127.0.0.1:${port}
  }
[domain_realm]
  localhost = ${REALM}
`,
  );
  const kdcConf = join(dir, 'kdc.conf');
  writeFileSync(
    kdcConf,
    `[kdcdefaults]
  kdc_listen = 127.0.0.1:${port}
  kdc_tcp_listen = 127.0.0.1:${port}
[realms]
  ${REALM} = {
    database_name = ${join(dir, 'principal')}
    key_stash_file = ${join(dir, 'stash')}
    acl_file = ${join(dir, 'kadm5.acl')}
    max_life = 1h
  }
[logging]
  kdc = FILE:${join(dir, 'kdc.log')}
`,
  );
  writeFileSync(join(dir, 'kadm5.acl'), '');
  const env = { ...process.env, KRB5_CONFIG: krb5Conf, KRB5_KDC_PROFILE: kdcConf, PATH: [process.env.PATH, ...SBIN].join(':') };
  const run = (command: string, args: string[]): void => {
    execFileSync(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  };
  run('kdb5_util', ['create', '-s', '-r', REALM, '-P', 'master-password']);
  const child: ChildProcess = spawn('krb5kdc', ['-n', '-r', REALM], { env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await listening(port!);
  let keytabs = 0;
  return {
    realm: REALM,
    dir,
    krb5Conf,
    addPrincipal(principal) {
      const keytab = join(dir, `${++keytabs}.keytab`);
      run('kadmin.local', ['-r', REALM, '-q', `addprinc -randkey ${principal}`]);
      run('kadmin.local', ['-r', REALM, '-q', `ktadd -k ${keytab} ${principal}`]);
      return keytab;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
async function listening(port: number): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the KDC did not listen on 127.0.0.1:${port} within 10 s`);
}

/**
 * The TLS tests' keys and certificates: a CA, a server keystore signed by it, client certificates,
 * and the servers' trust store. Made with the `openssl` CLI when there is one (about a second), else
 * with Java's keytool (some twenty JVM starts: a minute or two on 2 busy cores); the trust store
 * always with keytool (see tls-materials-keytool.ts). ZK_TLS_TEST_KEYS=keytool chooses keytool.
 */
import { createPrivateKey } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportKey, keytoolCa, keytoolSigned, trustStore } from './tls-materials-keytool.js';
import { hasOpenSsl, newCa, newSigned, pkcs12 } from './tls-materials-openssl.js';

const STORE_PASSWORD = 'test-store-pw';

/** The password of every keystore the tests make (a Node TLS server's pfx passphrase). */
export const TEST_STORE_PASSWORD = STORE_PASSWORD;

export interface TlsMaterials {
  readonly dir: string;
  /** PEM of the CA that signed the server's and the good client's certificates. */
  readonly ca: string;
  /** PEM of a CA that signed nothing the server has. */
  readonly otherCa: string;
  /** The server's keystore and truststore (PKCS#12, password STORE_PASSWORD). */
  readonly serverKeystore: string;
  readonly serverTruststore: string;
  /** A client certificate signed by `ca`, and its key (plain, and encrypted with `passphrase`). */
  readonly clientCert: string;
  readonly clientKey: string;
  readonly clientKeyEncrypted: string;
  readonly passphrase: string;
  /** A client certificate signed by `otherCa`: the server does not trust it. */
  readonly rogueCert: string;
  readonly rogueKey: string;
  /** What made the keys: openssl, or keytool (its private keys exported with openssl or Java). */
  readonly madeWith: 'openssl' | 'keytool+openssl' | 'keytool+java';
  remove(): void;
}

type Made = Pick<TlsMaterials, 'ca' | 'otherCa' | 'serverKeystore' | 'clientCert' | 'clientKey' | 'rogueCert' | 'rogueKey' | 'madeWith'>;

function withOpenSsl(dir: string): Made {
  const ca = newCa(dir, 'ca', 'nestjs-zk-lock test CA');
  const otherCa = newCa(dir, 'other-ca', 'nestjs-zk-lock other CA');
  const serverKeystore = join(dir, 'server.p12');
  pkcs12(serverKeystore, 'server', newSigned(dir, 'server', 'localhost', ca, 'IP:127.0.0.1,DNS:localhost', 'serverAuth'), ca.cert, STORE_PASSWORD);
  const client = newSigned(dir, 'client', 'nestjs-zk-lock test client', ca, 'IP:127.0.0.1', 'clientAuth');
  const rogue = newSigned(dir, 'rogue', 'nestjs-zk-lock rogue client', otherCa, 'IP:127.0.0.1', 'clientAuth');
  for (const key of [client.key, rogue.key]) chmodSync(key, 0o600);
  return { ca: ca.cert, otherCa: otherCa.cert, serverKeystore, clientCert: client.cert, clientKey: client.key, rogueCert: rogue.cert, rogueKey: rogue.key, madeWith: 'openssl' };
}

function withKeytool(dir: string): Made {
  const via = hasOpenSsl() ? 'openssl' : 'java';
  const ca = { ...keytoolCa(dir, 'ca', 'nestjs-zk-lock test CA', STORE_PASSWORD), alias: 'ca' };
  const otherCa = { ...keytoolCa(dir, 'otherca', 'nestjs-zk-lock other CA', STORE_PASSWORD), alias: 'otherca' };
  const server = keytoolSigned(dir, 'server', 'localhost', ca, 'ip:127.0.0.1,dns:localhost', 'serverAuth', STORE_PASSWORD);
  const client = keytoolSigned(dir, 'client', 'nestjs-zk-lock test client', ca, 'ip:127.0.0.1', 'clientAuth', STORE_PASSWORD);
  const rogue = keytoolSigned(dir, 'rogue', 'nestjs-zk-lock rogue client', otherCa, 'ip:127.0.0.1', 'clientAuth', STORE_PASSWORD);
  return {
    ca: ca.cert,
    otherCa: otherCa.cert,
    serverKeystore: server.store,
    clientCert: client.cert,
    clientKey: exportKey(dir, client.store, 'client', via, STORE_PASSWORD),
    rogueCert: rogue.cert,
    rogueKey: exportKey(dir, rogue.store, 'rogue', via, STORE_PASSWORD),
    madeWith: `keytool+${via}`,
  };
}

/** Makes every key and certificate the TLS tests use, in a fresh temporary directory. */
export function makeTlsMaterials(): TlsMaterials {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-tls-'));
  try {
    const made = process.env.ZK_TLS_TEST_KEYS !== 'keytool' && hasOpenSsl() ? withOpenSsl(dir) : withKeytool(dir);
    const serverTruststore = join(dir, 'truststore.p12');
    trustStore(serverTruststore, made.ca, STORE_PASSWORD);
    const passphrase = 'correct horse battery staple';
    const clientKeyEncrypted = join(dir, 'client-key-encrypted.pem');
    writeFileSync(
      clientKeyEncrypted,
      createPrivateKey(readFileSync(made.clientKey)).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }) as string,
      { mode: 0o600 },
    );
    return { dir, ...made, serverTruststore, clientKeyEncrypted, passphrase, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A server certificate for another host than the servers' own, signed by the materials' CA. */
export interface OtherHostCertificate {
  /** The only name it holds (DNS); no IP address. */
  readonly name: string;
  /** PKCS#12 keystore (password STORE_PASSWORD): a ZooKeeper server's ssl.keyStore, or a Node TLS server's pfx. */
  readonly keystore: string;
}

/**
 * A certificate the CA of `m` signed for `zk-elsewhere.invalid` only: valid, but for another host.
 * Made in a directory of its own (the materials may be shared by the run's files), under the temp
 * directory, with what made the materials (it needs their CA's key).
 */
export function makeOtherHostCertificate(m: TlsMaterials): OtherHostCertificate {
  const name = 'zk-elsewhere.invalid';
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-tls-elsewhere-'));
  if (m.madeWith === 'openssl') {
    const keystore = join(dir, 'elsewhere.p12');
    const signed = newSigned(dir, 'elsewhere', name, { cert: m.ca, key: join(m.dir, 'ca-key.pem') }, `DNS:${name}`, 'serverAuth');
    pkcs12(keystore, 'elsewhere', signed, m.ca, STORE_PASSWORD);
    return { name, keystore };
  }
  const ca = { store: join(m.dir, 'ca.p12'), cert: m.ca, alias: 'ca' };
  return { name, keystore: keytoolSigned(dir, 'elsewhere', name, ca, `dns:${name}`, 'serverAuth', STORE_PASSWORD).store };
}

/** The keystore lines of zoo.cfg for a server that presents `keystore` (made with the tests' password). */
export function keystoreConfig(keystore: string): string[] {
  return [`ssl.keyStore.location=${keystore}`, `ssl.keyStore.password=${STORE_PASSWORD}`];
}

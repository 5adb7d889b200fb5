/**
 * The TLS tests' keys and certificates made with the `openssl` CLI: each is a short native process
 * (RSA key generation is most of its time), where keytool starts a JVM per step.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The extensions of each kind of certificate, and a `req` section, so that no step depends on the
 * machine's own openssl.cnf (whose defaults differ between distributions).
 */
function extensionsFile(dir: string): string {
  const file = join(dir, 'openssl.cnf');
  writeFileSync(
    file,
    [
      '[req]',
      'distinguished_name = dn',
      'prompt = no',
      '[dn]',
      'CN = unused',
      '[ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign',
      'subjectKeyIdentifier = hash',
      '',
    ].join('\n'),
  );
  return file;
}

function openssl(args: string[]): void {
  const result = spawnSync('openssl', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr || result.stdout || result.error}`);
}

export function hasOpenSsl(): boolean {
  return spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
}

/** An RSA 2048 key as unencrypted PKCS#8 PEM, in `dir`; returns its path. */
function newKey(dir: string, name: string): string {
  const key = join(dir, `${name}-key.pem`);
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key]);
  return key;
}

/** A CA: its key (`<name>-key.pem`) and self-signed certificate (`<name>.pem`), valid 3 days. */
export function newCa(dir: string, name: string, cn: string): { cert: string; key: string } {
  const key = newKey(dir, name);
  const cert = join(dir, `${name}.pem`);
  openssl(['req', '-x509', '-new', '-key', key, '-subj', `/CN=${cn}`, '-days', '3', '-config', extensionsFile(dir), '-extensions', 'ca', '-out', cert]);
  return { cert, key };
}

/**
 * A key and a certificate for `cn` signed by `ca`, valid 3 days, with `san` (e.g.
 * `IP:127.0.0.1,DNS:localhost`) and the extended key usage `eku` (serverAuth or clientAuth).
 */
export function newSigned(dir: string, name: string, cn: string, ca: { cert: string; key: string }, san: string, eku: string): { cert: string; key: string } {
  const key = newKey(dir, name);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const extensions = join(dir, `${name}.ext`);
  writeFileSync(extensions, [`subjectAltName = ${san}`, `extendedKeyUsage = ${eku}`, 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid', ''].join('\n'));
  openssl(['req', '-new', '-key', key, '-subj', `/CN=${cn}`, '-config', extensionsFile(dir), '-out', csr]);
  const serial = `0x${randomBytes(8).toString('hex')}`;
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', serial, '-days', '3', '-extfile', extensions, '-out', cert]);
  return { cert, key };
}

/** A PKCS#12 keystore holding `signed`'s key under `alias`, with its certificate and the CA's: a ZooKeeper server's ssl.keyStore, or a Node TLS server's pfx. */
export function pkcs12(store: string, alias: string, signed: { cert: string; key: string }, caCert: string, password: string): void {
  openssl(['pkcs12', '-export', '-in', signed.cert, '-inkey', signed.key, '-certfile', caCert, '-name', alias, '-passout', `pass:${password}`, '-out', store]);
}

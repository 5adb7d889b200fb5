/**
 * The TLS tests' keys and certificates made with Java's keytool, for a machine without the
 * `openssl` CLI (ZK_TLS_TEST_KEYS=keytool chooses it anyway), and the servers' trust store, which
 * only keytool makes in a form Java trusts (a PKCS#12 certificate entry marked trusted).
 *
 * keytool cannot export a private key: the clients' keys are taken out of their PKCS#12 keystores
 * with a few lines of Java run from source (Java 11+ launches a single source file; needs the JDK's
 * compiler module), or with openssl when it is there.
 */
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** keytool's JVM is short-lived: the client compiler alone and the serial collector about halve its CPU time. */
const KEYTOOL_JVM = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC'];

function keytool(args: string[], password: string): void {
  const result = spawnSync('keytool', [...KEYTOOL_JVM, ...args, '-storepass', password, '-noprompt'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`keytool ${args.join(' ')} failed: ${result.stderr || result.stdout || result.error}`);
}

/** A PKCS#12 trust store that trusts the CA certificate `caPem`. */
export function trustStore(store: string, caPem: string, password: string): void {
  keytool(['-importcert', '-alias', 'ca', '-file', caPem, '-keystore', store, '-storetype', 'PKCS12'], password);
}

/** A key pair in `store` (PKCS#12) under `alias`. */
function keyPair(store: string, alias: string, cn: string, password: string, extra: string[] = []): void {
  keytool(['-genkeypair', '-alias', alias, '-keyalg', 'RSA', '-keysize', '2048', '-dname', `CN=${cn}`, '-validity', '3', '-storetype', 'PKCS12', '-keystore', store, ...extra], password);
}

/** A CA's keystore `<name>.p12` and its certificate's PEM `<name>.pem`. */
export function keytoolCa(dir: string, name: string, cn: string, password: string): { store: string; cert: string } {
  const store = join(dir, `${name}.p12`);
  const cert = join(dir, `${name}.pem`);
  keyPair(store, name, cn, password, ['-ext', 'bc:c']);
  keytool(['-exportcert', '-rfc', '-alias', name, '-keystore', store, '-file', cert], password);
  return { store, cert };
}

/**
 * A keystore `<alias>.p12` with a key for `cn` signed by the CA (its chain imported back), with
 * `san` (keytool's form: `ip:127.0.0.1,dns:localhost`) and `eku`. Returns the keystore and the PEM
 * of the signed certificate.
 */
export function keytoolSigned(dir: string, alias: string, cn: string, ca: { store: string; cert: string; alias: string }, san: string, eku: string, password: string): { store: string; cert: string } {
  const store = join(dir, `${alias}.p12`);
  const csr = join(dir, `${alias}.csr`);
  const cert = join(dir, `${alias}.pem`);
  keyPair(store, alias, cn, password);
  keytool(['-certreq', '-alias', alias, '-keystore', store, '-file', csr], password);
  keytool(['-gencert', '-alias', ca.alias, '-keystore', ca.store, '-infile', csr, '-outfile', cert, '-rfc', '-validity', '3', '-ext', `SAN=${san}`, '-ext', `EKU=${eku}`], password);
  keytool(['-importcert', '-alias', `${ca.alias}-ca`, '-file', ca.cert, '-keystore', store, '-storetype', 'PKCS12'], password);
  keytool(['-importcert', '-alias', alias, '-file', cert, '-keystore', store, '-storetype', 'PKCS12'], password);
  return { store, cert };
}

const EXPORT_KEY_JAVA = `
import java.io.FileInputStream;
import java.security.KeyStore;
import java.util.Base64;
public class ExportKey {
  public static void main(String[] a) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (FileInputStream in = new FileInputStream(a[0])) { ks.load(in, a[2].toCharArray()); }
    byte[] der = ks.getKey(a[1], a[2].toCharArray()).getEncoded(); // PKCS#8
    System.out.print("-----BEGIN PRIVATE KEY-----\\n" + Base64.getMimeEncoder(64, "\\n".getBytes()).encodeToString(der) + "\\n-----END PRIVATE KEY-----\\n");
  }
}
`;

/** The private key of `alias` in `store`, as unencrypted PKCS#8 PEM in `<alias>-key.pem`; returns its path. */
export function exportKey(dir: string, store: string, alias: string, via: 'openssl' | 'java', password: string): string {
  const out = join(dir, `${alias}-key.pem`);
  const result =
    via === 'openssl'
      ? spawnSync('openssl', ['pkcs12', '-in', store, '-nocerts', '-nodes', '-passin', `pass:${password}`], { encoding: 'utf8' })
      : (() => {
          const source = join(dir, 'ExportKey.java');
          writeFileSync(source, EXPORT_KEY_JAVA);
          return spawnSync('java', [source, store, alias, password], { encoding: 'utf8' });
        })();
  if (result.status !== 0) throw new Error(`exporting the key of ${alias} with ${via} failed: ${result.stderr}`);
  // openssl prints "Bag Attributes" before the key: keep the PEM block only, as PKCS#8.
  const key = createPrivateKey(result.stdout).export({ type: 'pkcs8', format: 'pem' }) as string;
  writeFileSync(out, key, { mode: 0o600 });
  return out;
}

/**
 * TLS for the tests: keys and certificates made with Java's keytool (a CA, a server keystore signed
 * by it, client certificates), and a ZooKeeper that listens on a `secureClientPort` only.
 *
 * The client side needs PEM files. Certificates come out of keytool as PEM (`-exportcert -rfc`);
 * keytool cannot export a private key, so the client's key is taken out of its PKCS#12 keystore
 * with the `openssl` CLI when there is one, else with a few lines of Java run from source (Java 11+
 * launches a single source file; needs the JDK's compiler module).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { isolatedCommand } from '../../lib/testing/isolated-spawn.js';
import { makeDataDir, resolveInstall, track } from '../../lib/testing/zk-process.js';
import { freePorts } from './zk-server.js';

const STORE_PASSWORD = 'test-store-pw';

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
  /** How the private keys were exported. */
  readonly keyExport: 'openssl' | 'java';
  remove(): void;
}

/** keytool's JVM is short-lived: the client compiler alone and the serial collector about halve its CPU time. */
const KEYTOOL_JVM = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC'];

function keytool(args: string[]): void {
  const result = spawnSync('keytool', [...KEYTOOL_JVM, ...args, '-storepass', STORE_PASSWORD, '-noprompt'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`keytool ${args.join(' ')} failed: ${result.stderr || result.stdout || result.error}`);
}

/** A key pair in `store` (PKCS#12) under `alias`. */
function keyPair(store: string, alias: string, cn: string, extra: string[] = []): void {
  keytool(['-genkeypair', '-alias', alias, '-keyalg', 'RSA', '-keysize', '2048', '-dname', `CN=${cn}`, '-validity', '3', '-storetype', 'PKCS12', '-keystore', store, ...extra]);
}

/** `alias` of `store` signed by the CA `caAlias` of `caStore`; the chain is imported back into `store`. Returns the PEM of the signed certificate. */
function signBy(dir: string, caStore: string, caAlias: string, caPem: string, store: string, alias: string, ext: string[]): string {
  const csr = join(dir, `${alias}.csr`);
  const pem = join(dir, `${alias}.pem`);
  keytool(['-certreq', '-alias', alias, '-keystore', store, '-file', csr]);
  keytool(['-gencert', '-alias', caAlias, '-keystore', caStore, '-infile', csr, '-outfile', pem, '-rfc', '-validity', '3', ...ext]);
  keytool(['-importcert', '-alias', `${caAlias}-ca`, '-file', caPem, '-keystore', store, '-storetype', 'PKCS12']);
  keytool(['-importcert', '-alias', alias, '-file', pem, '-keystore', store, '-storetype', 'PKCS12']);
  return pem;
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

function hasOpenSsl(): boolean {
  if (process.env.ZK_TLS_TEST_KEY_EXPORT === 'java') return false;
  return spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;
}

/** The private key of `alias` in `store`, as unencrypted PKCS#8 PEM. */
function exportKey(dir: string, store: string, alias: string, via: 'openssl' | 'java'): string {
  const out = join(dir, `${alias}-key.pem`);
  const result =
    via === 'openssl'
      ? spawnSync('openssl', ['pkcs12', '-in', store, '-nocerts', '-nodes', '-passin', `pass:${STORE_PASSWORD}`], { encoding: 'utf8' })
      : (() => {
          const source = join(dir, 'ExportKey.java');
          writeFileSync(source, EXPORT_KEY_JAVA);
          return spawnSync('java', [source, store, alias, STORE_PASSWORD], { encoding: 'utf8' });
        })();
  if (result.status !== 0) throw new Error(`exporting the key of ${alias} with ${via} failed: ${result.stderr}`);
  // openssl prints "Bag Attributes" before the key: keep the PEM block only, as PKCS#8.
  const key = createPrivateKey(result.stdout).export({ type: 'pkcs8', format: 'pem' }) as string;
  writeFileSync(out, key, { mode: 0o600 });
  return out;
}

/** Makes every key and certificate the TLS tests use, in a fresh temporary directory. */
export function makeTlsMaterials(): TlsMaterials {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-tls-'));
  try {
    const via = hasOpenSsl() ? 'openssl' : 'java';
    const caStore = join(dir, 'ca.p12');
    keyPair(caStore, 'ca', 'nestjs-zk-lock test CA', ['-ext', 'bc:c']);
    const ca = join(dir, 'ca.pem');
    keytool(['-exportcert', '-rfc', '-alias', 'ca', '-keystore', caStore, '-file', ca]);
    const otherCaStore = join(dir, 'other-ca.p12');
    keyPair(otherCaStore, 'otherca', 'nestjs-zk-lock other CA', ['-ext', 'bc:c']);
    const otherCa = join(dir, 'other-ca.pem');
    keytool(['-exportcert', '-rfc', '-alias', 'otherca', '-keystore', otherCaStore, '-file', otherCa]);

    const serverKeystore = join(dir, 'server.p12');
    keyPair(serverKeystore, 'server', 'localhost');
    signBy(dir, caStore, 'ca', ca, serverKeystore, 'server', ['-ext', 'SAN=ip:127.0.0.1,dns:localhost', '-ext', 'EKU=serverAuth']);
    const serverTruststore = join(dir, 'truststore.p12');
    keytool(['-importcert', '-alias', 'ca', '-file', ca, '-keystore', serverTruststore, '-storetype', 'PKCS12']);

    const clientStore = join(dir, 'client.p12');
    keyPair(clientStore, 'client', 'nestjs-zk-lock test client');
    const clientCert = signBy(dir, caStore, 'ca', ca, clientStore, 'client', ['-ext', 'SAN=ip:127.0.0.1', '-ext', 'EKU=clientAuth']);
    const clientKey = exportKey(dir, clientStore, 'client', via);
    const passphrase = 'correct horse battery staple';
    const clientKeyEncrypted = join(dir, 'client-key-encrypted.pem');
    writeFileSync(
      clientKeyEncrypted,
      createPrivateKey(readFileSync(clientKey)).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }) as string,
      { mode: 0o600 },
    );

    const rogueStore = join(dir, 'rogue.p12');
    keyPair(rogueStore, 'rogue', 'nestjs-zk-lock rogue client');
    const rogueCert = signBy(dir, otherCaStore, 'otherca', otherCa, rogueStore, 'rogue', ['-ext', 'SAN=ip:127.0.0.1', '-ext', 'EKU=clientAuth']);
    const rogueKey = exportKey(dir, rogueStore, 'rogue', via);
    return {
      dir, ca, otherCa, serverKeystore, serverTruststore, clientCert, clientKey, clientKeyEncrypted, passphrase, rogueCert, rogueKey, keyExport: via,
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
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
 * Made in a directory of its own (the materials may be shared by the run's files), under the temp directory.
 */
export function makeOtherHostCertificate(m: TlsMaterials): OtherHostCertificate {
  const name = 'zk-elsewhere.invalid';
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-tls-elsewhere-'));
  const keystore = join(dir, 'elsewhere.p12');
  keyPair(keystore, 'elsewhere', name);
  signBy(dir, join(m.dir, 'ca.p12'), 'ca', m.ca, keystore, 'elsewhere', ['-ext', `SAN=dns:${name}`, '-ext', 'EKU=serverAuth']);
  return { name, keystore };
}

/** The keystore lines of zoo.cfg for a server that presents `keystore` (made with the tests' password). */
export function keystoreConfig(keystore: string): string[] {
  return [`ssl.keyStore.location=${keystore}`, `ssl.keyStore.password=${STORE_PASSWORD}`];
}

/** The password of every keystore the tests make (a Node TLS server's pfx passphrase). */
export const TEST_STORE_PASSWORD = STORE_PASSWORD;

export interface TlsZkServer {
  readonly port: number;
  readonly connectString: string;
  readonly dataDir: string;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * A standalone ZooKeeper with a `secureClientPort` only (no plain clientPort), Netty, and client
 * certificates required (`ssl.clientAuth=need`, unless told otherwise), on 127.0.0.1. Ready once a TLS `srvr` answers.
 */
export async function startTlsZkServer(materials: TlsMaterials, clientAuth: 'need' | 'want' | 'none' = 'need'): Promise<TlsZkServer> {
  const [port] = await freePorts(1);
  const dataDir = makeDataDir();
  const config = join(dataDir, 'zoo.cfg');
  writeFileSync(
    config,
    [
      'tickTime=200',
      `dataDir=${dataDir}`,
      `secureClientPort=${port}`,
      'secureClientPortAddress=127.0.0.1',
      'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
      `ssl.keyStore.location=${materials.serverKeystore}`,
      `ssl.keyStore.password=${STORE_PASSWORD}`,
      'ssl.keyStore.type=PKCS12',
      `ssl.trustStore.location=${materials.serverTruststore}`,
      `ssl.trustStore.password=${STORE_PASSWORD}`,
      'ssl.trustStore.type=PKCS12',
      `ssl.clientAuth=${clientAuth}`,
      // The client is 127.0.0.1 and its certificate says so; no reverse DNS is needed either way.
      'ssl.clientHostnameVerification=false',
      '4lw.commands.whitelist=srvr',
      'admin.enableServer=false',
      '',
    ].join('\n'),
  );
  const install = resolveInstall();
  // Debian's zookeeper.jar lists only part of Netty in its manifest's Class-Path: the secure port
  // (Netty's SslHandler) also needs netty-codec (and the resolver, unix-common), next to it.
  const classPath = [
    install.jar,
    ...['netty-codec.jar', 'netty-resolver.jar', 'netty-transport-native-unix-common.jar']
      .map((jar) => join(dirname(install.jar), jar))
      .filter((jar) => existsSync(jar)),
  ].join(':');
  const logFile = join(dataDir, 'server.log');
  const command = isolatedCommand(install.java, [
    '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
    '-Dzookeeper.admin.enableServer=false',
    '-cp', classPath,
    'org.apache.zookeeper.server.quorum.QuorumPeerMain', config,
  ]);
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(command.command, command.args, { stdio: ['ignore', log, log] });
  child.on('error', () => undefined);
  let running = true;
  const exited = track(child).then(() => {
    running = false;
  });
  const stop = async (): Promise<void> => {
    if (running) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // makeDataDir's own clean-up runs at process exit, which a Vitest worker may not reach.
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!running) throw new Error(`the TLS ZooKeeper exited during start-up; its log: ${logFile}\n${readFileSync(logFile, 'utf8').slice(-3000)}`);
    if (/Mode: standalone/.test(await tlsFourLetter(port, materials, 'srvr').catch(() => ''))) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the TLS ZooKeeper did not serve within 30 s; its log: ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, connectString: `127.0.0.1:${port}`, dataDir, stop };
}

/** A four-letter word (`srvr`, `cons` ...) sent to a secure port over TLS, with the good client certificate. */
export function tlsFourLetter(port: number, m: TlsMaterials, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: '127.0.0.1', port, ca: readFileSync(m.ca), cert: readFileSync(m.clientCert), key: readFileSync(m.clientKey), checkServerIdentity: () => undefined,
    });
    let answer = '';
    const timer = setTimeout(() => socket.destroy(new Error('timeout')), 2000);
    socket.once('secureConnect', () => socket.write(command));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

/** Records the longest gap between timer ticks (how long the event loop was blocked), in ms. */
export function eventLoopGaps(intervalMs = 5): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - intervalMs);
    last = now;
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      worst = Math.max(worst, performance.now() - last - intervalMs);
      return Math.max(0, worst);
    },
  };
}


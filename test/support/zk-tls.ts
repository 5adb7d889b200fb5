/**
 * TLS for the tests: a ZooKeeper that listens on a `secureClientPort` only, four-letter words over
 * TLS, and the event loop's worst gap. The keys and certificates: tls-materials.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { isolatedCommand } from '../../lib/testing/isolated-spawn.js';
import { makeDataDir, resolveInstall, track } from '../../lib/testing/zk-process.js';
import { freePorts } from './zk-server.js';
import { TEST_STORE_PASSWORD, type TlsMaterials } from './tls-materials.js';

const STORE_PASSWORD = TEST_STORE_PASSWORD;

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


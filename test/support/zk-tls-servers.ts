/**
 * The test kit's servers (lib/testing) with a `secureClientPort` beside the plain `clientPort`, for
 * the fault suites over TLS. The clients under test connect to the secure ports only (client
 * certificates required); the plain ports serve the harness's own tools (four-letter words,
 * expiring a session on purpose, the observer that counts what is left), which test nothing about
 * TLS.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ZkTlsOptions } from '../../lib/zookeeper/zk-tls.options.js';
import { makeDataDir, ZK_JAR } from '../../lib/testing/zk-process.js';
import { ensembleOf } from '../../lib/testing/zk-test-ensemble.js';
import { JavaZkServer } from '../../lib/testing/zk-test-server.js';
import { freePorts, type ZkEnsemble, type ZkServer } from './zk-server.js';
import { runTlsMaterials } from './shared-tls-materials.js';
import type { TlsMaterials } from './tls-materials.js';
import { tlsFourLetter } from './zk-tls.js';

/** How the clients under test reach the servers: over plain TCP or over TLS. */
export interface ClientSide {
  readonly name: 'plain TCP' | 'TLS';
  /** The `tls` option of every client under test; undefined over plain TCP. */
  readonly tls: ZkTlsOptions | undefined;
  /** Where a client connects to reach `server`. */
  address(server: ZkServer): string;
  /** `cons` as the clients' port sees it (a secure port lists only its own connections). */
  connections(server: ZkServer): Promise<string>;
}

export const PLAIN_CLIENTS: ClientSide = {
  name: 'plain TCP',
  tls: undefined,
  address: (server) => server.connectString,
  connections: (server) => server.fourLetter('cons'),
};

/** The clients' connect string for a whole ensemble. */
export function clientConnectString(side: ClientSide, ensemble: ZkEnsemble): string {
  return ensemble.servers.map((s) => side.address(s)).join(',');
}

export interface TlsZooKeeper {
  readonly side: ClientSide;
  readonly materials: TlsMaterials;
  /** One server with a secure port of its own (a member of an ensemble when `peers` is given); not started. */
  member(id: number, clientPort: number, dataDir: string, peers?: string[], extraConfig?: string[]): Promise<JavaZkServer>;
  /** A standalone server; `extraConfig`: more zoo.cfg lines (e.g. `maxSessionTimeout=20000`). */
  startServer(extraConfig?: string[]): Promise<ZkServer>;
  /** `extraConfig(id)`: more zoo.cfg lines for member `id` (e.g. another keystore). */
  startEnsemble(size: number, extraConfig?: (id: number) => string[]): Promise<ZkEnsemble>;
  /** Removes the class-path directory, and the keys unless they are the run's shared ones (stop the servers first). */
  remove(): void;
}

/** Keys, certificates (the run's, see shared-tls-materials.ts), and servers that take TLS clients. */
export function tlsZooKeeper(): TlsZooKeeper {
  const materials = runTlsMaterials();
  const securePorts = new Map<ZkServer, number>();
  // Debian's zookeeper.jar names only part of Netty in its manifest (by absolute paths): the secure
  // port also needs these. The test kit takes a class path as a directory with a wildcard.
  const jars = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-tls-cp-'));
  const javaDir = ZK_JAR.slice(0, ZK_JAR.lastIndexOf('/'));
  for (const jar of [ZK_JAR, ...['netty-codec.jar', 'netty-resolver.jar', 'netty-transport-native-unix-common.jar'].map((j) => join(javaDir, j))]) {
    symlinkSync(jar, join(jars, jar.slice(jar.lastIndexOf('/') + 1)));
  }
  const port = (server: ZkServer): number => {
    const secure = securePorts.get(server);
    if (secure === undefined) throw new Error(`server ${server.id} on ${server.clientPort} has no secure port: make it with tlsZooKeeper().member`);
    return secure;
  };
  const member = async (id: number, clientPort: number, dataDir: string, peers?: string[], extraConfig: string[] = []): Promise<JavaZkServer> => {
    const [secure] = await freePorts(1);
    const password = 'test-store-pw';
    const server = new JavaZkServer(id, clientPort, dataDir, peers, {
      jarPath: `${jars}/*`,
      extraConfig: [
        `secureClientPort=${secure}`,
        'secureClientPortAddress=127.0.0.1',
        'serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory',
        `ssl.keyStore.location=${materials.serverKeystore}`,
        `ssl.keyStore.password=${password}`,
        'ssl.keyStore.type=PKCS12',
        `ssl.trustStore.location=${materials.serverTruststore}`,
        `ssl.trustStore.password=${password}`,
        'ssl.trustStore.type=PKCS12',
        'ssl.clientAuth=need',
        'ssl.clientHostnameVerification=false',
        ...extraConfig,
      ],
    });
    securePorts.set(server, secure!);
    return server;
  };
  const side: ClientSide = {
    name: 'TLS',
    tls: { ca: materials.ca, cert: materials.clientCert, key: materials.clientKey },
    address: (server) => `127.0.0.1:${port(server)}`,
    connections: (server) => tlsFourLetter(port(server), materials, 'cons'),
  };
  return {
    side,
    materials,
    member,
    async startServer(extraConfig) {
      const [clientPort] = await freePorts(1);
      const server = await member(1, clientPort!, makeDataDir(), undefined, extraConfig);
      await server.start();
      return server;
    },
    async startEnsemble(size, extraConfig) {
      const ports = await freePorts(size * 3);
      const ids = Array.from({ length: size }, (_, i) => i + 1);
      const peers = ids.map((id) => `server.${id}=127.0.0.1:${ports[(id - 1) * 3 + 1]}:${ports[(id - 1) * 3 + 2]}`);
      const servers = await Promise.all(
        ids.map((id) => {
          const dataDir = makeDataDir();
          writeFileSync(join(dataDir, 'myid'), `${id}\n`);
          return member(id, ports[(id - 1) * 3]!, dataDir, peers, extraConfig?.(id));
        }),
      );
      const stop = async (): Promise<void> => {
        await Promise.all(servers.map((s) => s.stop()));
      };
      try {
        await Promise.all(servers.map((s) => s.start()));
      } catch (error) {
        await stop();
        throw error;
      }
      return ensembleOf(servers, stop);
    },
    remove() {
      rmSync(jars, { recursive: true, force: true });
      materials.remove();
    },
  };
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZkLockError } from '../errors.js';
import { freePorts } from './zk-net.js';
import { makeDataDir, resolveInstall } from './zk-process.js';
import { JavaZkServer, type ZkServer, type ZkTestServerOptions } from './zk-test-server.js';

/** Options of a test ensemble: those of each member, less its port and data directory. */
export type ZkEnsembleOptions = Omit<ZkTestServerOptions, 'port' | 'dataDir'>;

/** Several ZooKeeper servers forming one ensemble, on 127.0.0.1. */
export interface ZkEnsemble {
  /** The members, by id (servers[0] has id 1). Kill or stop one to test a quorum that loses a member. */
  readonly servers: ZkServer[];
  /** Every member's `127.0.0.1:<port>`, comma-separated, for ZkLockModule's connectionString. */
  readonly connectString: string;
  /** The running member whose `srvr` says leader (or standalone). Rejects when none does (no quorum, or an election under way). */
  leader(): Promise<ZkServer>;
  /** Stops every member. */
  stop(): Promise<void>;
}

/**
 * Starts an ensemble of `size` servers (3 by default: it keeps serving with one member down) and
 * resolves once every member serves.
 * @throws ZooKeeperNotInstalledError when Java or the server jar is missing; ZkTestServerError when a member does not come up.
 */
export async function startZkEnsemble(size = 3, options: ZkEnsembleOptions = {}): Promise<ZkEnsemble> {
  resolveInstall(options);
  const ports = await freePorts(size * 3);
  const members = Array.from({ length: size }, (_, i) => ({
    id: i + 1,
    client: ports[i * 3]!,
    quorum: ports[i * 3 + 1]!,
    election: ports[i * 3 + 2]!,
  }));
  const peers = members.map((m) => `server.${m.id}=127.0.0.1:${m.quorum}:${m.election}`);
  const servers = members.map((m) => {
    const dataDir = makeDataDir(options.dataDirParent);
    writeFileSync(join(dataDir, 'myid'), `${m.id}\n`);
    return new JavaZkServer(m.id, m.client, dataDir, peers, options);
  });
  try {
    await Promise.all(servers.map((s) => s.start()));
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return ensembleOf(servers, async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });
}

/** The ensemble of these started `servers`, which `stop` stops (with whatever else it set up). */
export function ensembleOf(servers: ZkServer[], stop: () => Promise<void>): ZkEnsemble {
  return {
    servers,
    connectString: servers.map((s) => s.connectString).join(','),
    async leader() {
      for (const server of servers) {
        if (!server.running) continue;
        const mode = await server.fourLetter('srvr').catch(() => '');
        if (/Mode: (leader|standalone)/.test(mode)) return server;
      }
      throw new ZkLockError('No running member of the ensemble is the leader: fewer than a quorum run, or an election under way (retry shortly).');
    },
    stop,
  };
}

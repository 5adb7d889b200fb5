/**
 * The ensemble of the isolation trials (partition-trials.ts): member 3 linked to the others through
 * proxies, so that it can be cut off from them while it goes on answering its clients.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir } from '../../lib/testing/zk-process.js';
import { ensembleOf } from '../../lib/testing/zk-test-ensemble.js';
import { JavaZkServer } from '../../lib/testing/zk-test-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { freePorts, type ZkEnsemble } from '../support/zk-server.js';
import type { TlsZooKeeper } from '../support/zk-tls-servers.js';

/**
 * A 3-node ensemble whose member 3 reaches the others, and they it, only through proxies that can
 * cut it off. Members 1 and 2 start first, so one of them leads and 3 follows. Each member has a
 * secure client port too when `tls` is given.
 */
export async function startIsolatableEnsemble(tls?: TlsZooKeeper): Promise<ZkEnsemble & { cut(cut: boolean): void }> {
  const ports = await freePorts(9);
  const real = [1, 2, 3].map((id) => ({ id, client: ports[(id - 1) * 3]!, quorum: ports[(id - 1) * 3 + 1]!, election: ports[(id - 1) * 3 + 2]! }));
  const proxies: TcpProxy[] = [];
  const via = async (port: number): Promise<number> => {
    const proxy = await startTcpProxy(port);
    proxies.push(proxy);
    return proxy.port;
  };
  // How each member sees the others: 3 sees 1 and 2 through proxies, and 1 and 2 see 3 through one.
  const seen = async (by: number, of: (typeof real)[number]): Promise<string> => {
    const proxied = by !== of.id && (by === 3 || of.id === 3);
    const quorum = proxied ? await via(of.quorum) : of.quorum;
    const election = proxied ? await via(of.election) : of.election;
    return `server.${of.id}=127.0.0.1:${quorum}:${election}`;
  };
  const servers: JavaZkServer[] = [];
  for (const member of real) {
    const peers: string[] = [];
    for (const other of real) peers.push(await seen(member.id, other));
    const dataDir = makeDataDir();
    writeFileSync(join(dataDir, 'myid'), `${member.id}\n`);
    servers.push(tls ? await tls.member(member.id, member.client, dataDir, peers) : new JavaZkServer(member.id, member.client, dataDir, peers));
  }
  const stopAll = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(proxies.map((p) => p.close()));
  };
  try {
    await Promise.all([servers[0]!.start(), servers[1]!.start()]);
    await servers[2]!.start();
  } catch (error) {
    await stopAll();
    throw error;
  }
  return Object.assign(ensembleOf(servers, stopAll), {
    cut(cut: boolean): void {
      for (const proxy of proxies) proxy.cut(cut);
    },
  });
}

/**
 * Which write transactions a workload caused: the leader's transaction log, dumped with ZooKeeper's
 * own TxnLogToolkit, counted by type (create, create2, delete, multi, setData, createSession,
 * closeSession, createContainer, deleteContainer for a reaped lock parent, error for a failed
 * write...) within zxid windows recorded during the run. What `zk_proposal_count` counts as one
 * number, this splits by kind, so a workload can say why one implementation writes more than
 * another.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ZK_JAR } from '../../test/support/zk-server.js';

/** Counts per transaction type of the transactions whose zxid lies in (from, to] of any window. */
export function countTxnTypes(dataDir: string, windows: readonly [string, string][]): Record<string, number> | { error: string } {
  const dir = join(dataDir, 'version-2');
  const logs = readdirSync(dir).filter((name) => name.startsWith('log.'));
  const ranges = windows.map(([from, to]) => [BigInt(from), BigInt(to)] as const);
  const counts: Record<string, number> = {};
  for (const log of logs) {
    const dump = spawnSync(process.env.JAVA ?? 'java', ['-cp', ZK_JAR, 'org.apache.zookeeper.server.persistence.TxnLogToolkit', '-d', join(dir, log)], {
      encoding: 'latin1',
      maxBuffer: 1 << 30,
    });
    if (dump.status !== 0) return { error: `TxnLogToolkit failed on ${log}: ${(dump.stderr ?? '').slice(0, 300)}` };
    for (const match of dump.stdout.matchAll(/ zxid (0x[0-9a-f]+) (\w+)/g)) {
      const zxid = BigInt(match[1]!);
      if (ranges.some(([from, to]) => zxid > from && zxid <= to)) counts[match[2]!] = (counts[match[2]!] ?? 0) + 1;
    }
  }
  return counts;
}

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

/**
 * For each key, counts per transaction type of the transactions whose zxid lies in (from, to] of
 * one of its windows. Each log file is dumped once, and only those that can hold a window's zxids
 * (a log is named after its first zxid and runs until the next one's).
 */
export function countTxnTypes<K>(dataDir: string, windows: ReadonlyMap<K, readonly [string, string][]>): Map<K, Record<string, number>> | { error: string } {
  const dir = join(dataDir, 'version-2');
  const logs = readdirSync(dir)
    .filter((name) => name.startsWith('log.'))
    .map((name) => ({ name, first: BigInt(`0x${name.slice(4)}`) }))
    .sort((a, b) => (a.first < b.first ? -1 : 1));
  const ranges = [...windows].map(([key, list]) => ({ key, list: list.map(([from, to]) => [BigInt(from), BigInt(to)] as const) }));
  const all = ranges.flatMap((r) => r.list);
  if (all.length === 0) return new Map();
  const lowest = all.reduce((min, [from]) => (from < min ? from : min), all[0]![0]);
  const highest = all.reduce((max, [, to]) => (to > max ? to : max), all[0]![1]);
  const counts = new Map<K, Record<string, number>>(ranges.map((r) => [r.key, {}]));
  for (let i = 0; i < logs.length; i++) {
    const next = logs[i + 1]?.first;
    if (logs[i]!.first > highest || (next !== undefined && next <= lowest)) continue;
    const dump = spawnSync(process.env.JAVA ?? 'java', ['-cp', ZK_JAR, 'org.apache.zookeeper.server.persistence.TxnLogToolkit', '-d', join(dir, logs[i]!.name)], {
      encoding: 'latin1',
      maxBuffer: 1 << 30,
    });
    if (dump.status !== 0) return { error: `TxnLogToolkit failed on ${logs[i]!.name}: ${(dump.stderr ?? '').slice(0, 300)}` };
    for (const match of dump.stdout.matchAll(/ zxid (0x[0-9a-f]+) (\w+)/g)) {
      const zxid = BigInt(match[1]!);
      if (zxid <= lowest || zxid > highest) continue;
      const owner = ranges.find((r) => r.list.some(([from, to]) => zxid > from && zxid <= to));
      if (owner) {
        const tally = counts.get(owner.key)!;
        tally[match[2]!] = (tally[match[2]!] ?? 0) + 1;
      }
    }
  }
  return counts;
}

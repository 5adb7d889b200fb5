/**
 * The full fault soak: every fault once, then random faults, at least as many again and until the
 * clients have made at least SOAK_ACQUISITIONS (default 100,000) acquisitions; prints the figures and
 * writes them to docs/faults.md (with `--tls`, the clients connect over TLS: its own section).
 * Run with `npm run test:faults:soak` or `npm run test:faults:soak:tls`.
 */
import { cpus, loadavg } from 'node:os';
import { FAULTS } from './faults.js';
import { tlsZooKeeper } from '../support/zk-tls-servers.js';
import { writeReportSection, zookeeperVersion } from './report-file.js';
import { describeReport, runFaultSuite } from './suite.js';

const overTls = process.argv.includes('--tls');
const minAcquisitions = Number(process.env.SOAK_ACQUISITIONS ?? (overTls ? 10_000 : 100_000));
const tls = overTls ? tlsZooKeeper() : undefined;
// Every fault once, then random ones: at least as many again, and until the acquisitions are made.
const minFaults = 2 * Object.keys(FAULTS).length;
const loadAtStart = loadavg()[0]!;
const report = await runFaultSuite({ minAcquisitions, minFaults, tls, log: (line) => console.log(`[soak${tls ? ' tls' : ''}] ${line}`) }).finally(() => tls?.remove());
const lines = describeReport(report);
console.log(lines.join('\n'));
const zookeeper = zookeeperVersion();
const faultCounts = new Map<string, number>();
for (const name of report.faultsRun) faultCounts.set(name, (faultCounts.get(name) ?? 0) + 1);
writeReportSection(
  tls ? 'soak-tls' : 'soak',
  `## Fault soak${tls ? ' over TLS' : ''}: many clients, many faults

Command: \`npm run test:faults:soak${tls ? ':tls' : ''}\` (SOAK_ACQUISITIONS=${minAcquisitions}, at least ${minFaults} faults), run ${new Date().toISOString().slice(0, 10)}.
Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ZooKeeper ${zookeeper}, 3 servers on 127.0.0.1 with 200 ms ticks.
Load: the machine was shared with other engineers' builds and tests (1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end), so the times are slower than on an idle machine.
Clients: 5 Node processes, session timeout 2 s, on three resources (exclusive; read/write; mixed), ${tls ? "over TLS to each server's secureClientPort (client certificates required)" : 'over plain TCP'}, each through a proxy per server (the partitions).

\`\`\`
${lines.join('\n')}
\`\`\`

Faults injected: ${[...faultCounts].map(([name, count]) => `${name} × ${count}`).join(', ')}.

How to read it: see [The checker](#the-checker) above. \`violations\` must be 0; \`excused overlaps\` are holders
paused (SIGSTOP) past their session or whose session the injector expired, which then saw their lost
signal after the delay shown; their late writes are the refused fenced writes.
`,
);
process.exit(report.result.violations.length === 0 && report.leftovers.nodes.length === 0 && report.leftovers.watches === 0 ? 0 : 1);

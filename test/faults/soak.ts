/**
 * The full fault soak: every fault once, then random faults, at least as many again and until the
 * clients have made at least SOAK_ACQUISITIONS (default 10,000) acquisitions; prints the figures and
 * writes them to docs/faults.md.
 * Run with `npm run test:faults:soak`.
 */
import { execSync } from 'node:child_process';
import { cpus } from 'node:os';
import { FAULTS } from './faults.js';
import { writeReportSection } from './report-file.js';
import { describeReport, runFaultSuite } from './suite.js';

const minAcquisitions = Number(process.env.SOAK_ACQUISITIONS ?? 10_000);
// Every fault once, then random ones: at least as many again, and until the acquisitions are made.
const minFaults = 2 * Object.keys(FAULTS).length;
const report = await runFaultSuite({ minAcquisitions, minFaults, log: (line) => console.log(`[soak] ${line}`) });
const lines = describeReport(report);
console.log(lines.join('\n'));
const zookeeper = (() => {
  try {
    return execSync("dpkg-query -W -f='${Version}' zookeeper", { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const faultCounts = new Map<string, number>();
for (const name of report.faultsRun) faultCounts.set(name, (faultCounts.get(name) ?? 0) + 1);
writeReportSection(
  'soak',
  `## Fault soak: many clients, many faults

Command: \`npm run test:faults:soak\` (SOAK_ACQUISITIONS=${minAcquisitions}, at least ${minFaults} faults), run ${new Date().toISOString().slice(0, 10)}.
Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ZooKeeper ${zookeeper} (Debian package), 3 servers on 127.0.0.1 with 200 ms ticks.
Clients: 5 Node processes, session timeout 2 s, on three resources (exclusive; read/write; mixed).

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

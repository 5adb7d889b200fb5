/**
 * The partition trials in full: PARTITION_TRIALS (default 25) trials of each fault on a standalone
 * server and on a 3-node ensemble, and the lease's cost for an idle holder; prints the table and
 * writes it to docs/faults.md. Run with `npm run test:partitions`; with `--tls`
 * (`npm run test:partitions:tls`, default 10 trials of each), every client connects over TLS and
 * the table goes to a section of its own (no control run, no lease cost: those do not depend on the
 * transport).
 */
import { cpus, loadavg } from 'node:os';
import {
  ENSEMBLE_FAULTS,
  measureLeaseCost,
  runEnsembleTrials,
  runIsolationTrials,
  runStandaloneTrials,
  STANDALONE_FAULTS,
  TRIAL_SESSION_TIMEOUT_MS,
} from './partition-trials.js';
import { summarize } from './partition-summary.js';
import { tlsZooKeeper } from '../support/zk-tls-servers.js';
import { writeReportSection, zookeeperVersion } from './report-file.js';

const overTls = process.argv.includes('--tls');
const trials = Number(process.env.PARTITION_TRIALS ?? (overTls ? 10 : 25));
const log = (line: string): void => console.log(`[partitions${overTls ? ' tls' : ''}] ${line}`);
const started = performance.now();
const loadAtStart = loadavg()[0]!;
const tls = overTls ? tlsZooKeeper() : undefined;
const results = [
  ...(await runStandaloneTrials(STANDALONE_FAULTS, trials, log, tls)),
  ...(await runEnsembleTrials(ENSEMBLE_FAULTS, trials, log, tls)),
  ...(await runIsolationTrials(trials, undefined, log, tls)),
];
tls?.remove();
// The control: the same isolation with no lease margin, which the follower's late answers defeat.
const control = overTls ? undefined : summarize(await runIsolationTrials(Math.min(trials, 8), 0, log))[0]!;
const cost = overTls ? undefined : await measureLeaseCost(10);
const where: Record<string, string> = {
  'partition-both': 'standalone: H partitioned both ways',
  'partition-to-client': "standalone: the server's replies to H dropped",
  'partition-to-server': "standalone: H's requests dropped",
  'stall-server': 'standalone: the server stopped (SIGSTOP) for 1.5 T',
  'kill-follower': "ensemble: H's only server, a follower, killed",
  'kill-leader': "ensemble: H's only server, the leader, killed",
  'stall-follower': "ensemble: H's only server, a follower, stopped (SIGSTOP)",
  'stall-leader': "ensemble: H's only server, the leader, stopped (SIGSTOP)",
  'isolate-follower': "ensemble: H's only server, a follower, cut off from the leader (it answers H for up to syncLimit ticks)",
};
const ms = (v: number | undefined): string => (v === undefined ? '-' : `${Math.round(v)} ms`);
const rows = summarize(results).map(
  (s) => `| ${where[s.fault] ?? s.fault} | ${s.trials} | **${s.unsafe}** | ${s.granted} | ${ms(s.smallestMarginMs)} | ${ms(s.slowestToldMs)} |`,
);
const unsafe = results.filter((r) => r.unsafe).length;
const zookeeper = zookeeperVersion();
const text = `## Partitions and server loss${overTls ? ' over TLS' : ''}: is the holder told first?

Command: \`npm run test:partitions${overTls ? ':tls' : ''}\` (PARTITION_TRIALS=${trials}), run ${new Date().toISOString().slice(0, 10)}, ${Math.round((performance.now() - started) / 60_000)} min.
Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ZooKeeper ${zookeeper}, servers on 127.0.0.1 with 200 ms ticks and syncLimit 5.
Load: 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.
${overTls ? "Over TLS: H and W connect to the servers' secureClientPort with client certificates (required); H's proxy passes the TLS bytes through as they are.\n" : ''}In each trial a holder H (a LockService with default options, session timeout T = ${TRIAL_SESSION_TIMEOUT_MS} ms, so a lease of T/4 after the latest answer) holds a lock and a client W of another session waits for it; the fault cuts H off. The lock kind rotates: exclusive through the cohort, write (W reads), a one-permit semaphore, the simple lock. "Margin" is W's grant less H's signal.

| fault | trials | H told after W was granted | W granted | smallest margin | slowest H told (from the fault) |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Unsafe trials in all: **${unsafe}** of ${results.length}.${control ? ` The control, the last fault with \`leaseMarginMs: 0\`: H told after W was granted in **${control.unsafe} of ${control.trials}** trials (smallest margin ${ms(control.smallestMarginMs)}): a reply-based lease without the margin is not safe on an ensemble.` : ''} Every H was told with reason ${[...new Set(results.map((r) => r.reason ?? 'none'))].join(', ')}.
${
  cost
    ? `
What the lease costs: an idle holder sent ${cost.renewals} renewal reads (\`exists /\`) in 10 session timeouts, **${cost.requestsPerSessionTimeout.toFixed(1)} requests per session timeout**, and no other request (the C client's own pings are not counted); a holder whose session gets other answers sends none.
`
    : ''
}`;
console.log(text);
writeReportSection(overTls ? 'partitions-tls' : 'partitions', text);
process.exit(unsafe === 0 ? 0 : 1);

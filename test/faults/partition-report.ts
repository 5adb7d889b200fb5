/**
 * The partition trials in full: PARTITION_TRIALS (default 25) trials of each fault on a standalone
 * server and on a 3-node ensemble, and the lease's cost for an idle holder; then the same faults
 * with H the leader of an election and W next in line; prints the tables and writes them to
 * docs/faults.md (a section for the locks, one for the election). Run with `npm run test:partitions`;
 * with `--election` (`npm run test:partitions -- --election`), only the election's trials, and only
 * their section is written. With `--tls` (`npm run test:partitions:tls`, default 10 trials of each),
 * every client connects over TLS and the locks' table goes to a section of its own (no control
 * run, no lease cost: those do not depend on the transport; no election).
 */
import { cpus, loadavg } from 'node:os';
import {
  ELECTION_KINDS,
  ENSEMBLE_FAULTS,
  measureLeaseCost,
  runEnsembleTrials,
  runIsolationTrials,
  runStandaloneTrials,
  STANDALONE_FAULTS,
  TRIAL_SESSION_TIMEOUT_MS,
  type Kind,
  type TrialResult,
} from './partition-trials.js';
import { describeSetUps, summarize } from './partition-summary.js';
import { tlsZooKeeper } from '../support/zk-tls-servers.js';
import { writeReportSection, zookeeperVersion } from './report-file.js';
import { partitionTrials } from './run-options.js';

const overTls = process.argv.includes('--tls');
const electionOnly = process.argv.includes('--election');
if (overTls && electionOnly) throw new Error('--election runs over plain TCP only');
const trials = partitionTrials(overTls ? 10 : 25);
const log = (line: string): void => console.log(`[partitions${overTls ? ' tls' : ''}] ${line}`);
const zookeeper = zookeeperVersion();
const ms = (v: number | undefined): string => (v === undefined ? '-' : `${Math.round(v)} ms`);
const rows = (results: readonly TrialResult[]): string =>
  summarize(results)
    .map((s) => `| ${where[s.fault] ?? s.fault} | ${s.trials} | **${s.unsafe}** | ${s.granted} | ${ms(s.smallestMarginMs)} | ${ms(s.slowestToldMs)} |`)
    .join('\n');
const reasons = (results: readonly TrialResult[]): string => [...new Set(results.map((r) => r.reason ?? 'none'))].join(', ');
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

/** Every fault, standalone and ensemble, with the trials rotating over `kinds`. */
async function allFaults(kinds?: readonly Kind[], tls?: ReturnType<typeof tlsZooKeeper>): Promise<TrialResult[]> {
  return [
    ...(await runStandaloneTrials(STANDALONE_FAULTS, trials, log, tls, kinds)),
    ...(await runEnsembleTrials(ENSEMBLE_FAULTS, trials, log, tls, kinds)),
    ...(await runIsolationTrials(trials, undefined, log, tls, kinds)),
  ];
}

let unsafe = 0;
if (!electionOnly) unsafe += await locksSection();
if (!overTls) unsafe += await electionSection();
process.exit(unsafe === 0 ? 0 : 1);

/** The locks' trials, the control and the lease's cost; writes their section. Returns the unsafe trials. */
async function locksSection(): Promise<number> {
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const tls = overTls ? tlsZooKeeper() : undefined;
  const results = await allFaults(undefined, tls);
  tls?.remove();
  // The control: the same isolation with no lease margin, which the follower's late answers defeat.
  const control = overTls ? undefined : summarize(await runIsolationTrials(Math.min(trials, 8), 0, log))[0]!;
  const cost = overTls ? undefined : await measureLeaseCost(10);
  const unsafe = results.filter((r) => r.unsafe).length;
  const text = `## Partitions and server loss${overTls ? ' over TLS' : ''}: is the holder told first?

Command: \`npm run test:partitions${overTls ? ':tls' : ''}\` (PARTITION_TRIALS=${trials}), run ${new Date().toISOString().slice(0, 10)}, ${Math.round((performance.now() - started) / 60_000)} min.
Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ZooKeeper ${zookeeper}, servers on 127.0.0.1 with 200 ms ticks and syncLimit 5.
Load: 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.
${overTls ? "Over TLS: H and W connect to the servers' secureClientPort with client certificates (required); H's proxy passes the TLS bytes through as they are.\n" : ''}In each trial a holder H (a LockService with default options, session timeout T = ${TRIAL_SESSION_TIMEOUT_MS} ms, so a lease of T/4 after the latest answer) holds a lock and a client W of another session waits for it; the fault cuts H off. The lock kind rotates: exclusive through the cohort, write (W reads), a one-permit semaphore, the simple lock. "Margin" is W's grant less H's signal.

| fault | trials | H told after W was granted | W granted | smallest margin | slowest H told (from the fault) |
| --- | --- | --- | --- | --- | --- |
${rows(results)}

Unsafe trials in all: **${unsafe}** of ${results.length}.${control ? ` The control, the last fault with \`leaseMarginMs: 0\`: H told after W was granted in **${control.unsafe} of ${control.trials}** trials (smallest margin ${ms(control.smallestMarginMs)}): a reply-based lease without the margin is not safe on an ensemble.` : ''} Every H was told with reason ${reasons(results)}.${describeSetUps(results)}
${
  cost
    ? `
What the lease costs: an idle holder sent ${cost.renewals} renewal reads (\`exists /\`) in 10 session timeouts, **${cost.requestsPerSessionTimeout.toFixed(1)} requests per session timeout**, and no other request (the C client's own pings are not counted); a holder whose session gets other answers sends none.
`
    : ''
}`;
  console.log(text);
  writeReportSection(overTls ? 'partitions-tls' : 'partitions', text);
  return unsafe;
}

/** The election's trials over the same faults; writes their section. Returns the unsafe trials. */
async function electionSection(): Promise<number> {
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const results = await allFaults(ELECTION_KINDS);
  const unsafe = results.filter((r) => r.unsafe).length;
  const text = `## Partitions and server loss in an election: is the leader told first?

Command: \`npm run test:partitions${electionOnly ? ' -- --election' : ''}\` (PARTITION_TRIALS=${trials}), run ${new Date().toISOString().slice(0, 10)}, ${Math.round((performance.now() - started) / 60_000)} min for these trials.
Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ZooKeeper ${zookeeper}, servers on 127.0.0.1 with 200 ms ticks and syncLimit 5.
Load: 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.
The same faults as for the locks, with H the leader of an election: \`LockService.elect('r').leadership()\` (default options, session timeout T = ${TRIAL_SESSION_TIMEOUT_MS} ms), told when its term's \`signal\` aborts (LeadershipLostError); W, a participant in a process of its own, is next in line, and counts as granted when its own \`leadership()\` resolves. Once told, H leaves the election (its candidacy would otherwise queue again in a new session, and could come before W). "Margin" is W's election less H's signal.

| fault | trials | H told after W was elected | W elected | smallest margin | slowest H told (from the fault) |
| --- | --- | --- | --- | --- | --- |
${rows(results)}

Unsafe trials in all: **${unsafe}** of ${results.length}. Every H was told with reason ${reasons(results)}.${describeSetUps(results)}
`;
  console.log(text);
  writeReportSection('partitions-election', text);
  return unsafe;
}

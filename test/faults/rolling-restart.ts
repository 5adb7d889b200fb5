/**
 * The rolling-restart trial: a ZooKeeper upgrade as operators run it. A 3-member ensemble with
 * ZooKeeper's sample timing (tickTime 2000, syncLimit 5); 3 client processes with the library's
 * defaults (15 s sessions, the default lease margin, no cohort) looping on 3 exclusive locks; each
 * member in turn stopped, kept down ROLLING_DOWN_MS (default 3000), started, and given time to
 * sync. Reports lost holds, failed and timed-out acquires, overlaps (the checker: exclusivity,
 * fencing tokens only growing), and for each restart the longest time no acquire was granted.
 * Run with `npm run test:rolling-restart` (ROLLING_RUNS runs, default 1); `--write` puts the
 * table in docs/faults.md.
 */
import { startZkEnsemble } from '../support/zk-server.js';
import { type ClientEvent, monotonicMs } from './history.js';
import { FaultHarness, type HarnessOptions } from './harness.js';
import { writeReportSection, zookeeperVersion } from './report-file.js';

const DOWN_MS = Number(process.env.ROLLING_DOWN_MS ?? 3000);
const RUNS = Number(process.env.ROLLING_RUNS ?? 1);
/** After a member serves again, before the next one stops: it has synced with the leader. */
const SETTLE_MS = 5000;

const OPTIONS: HarnessOptions = {
  clients: 3,
  resources: { a: ['exclusive'], b: ['exclusive'], c: ['exclusive'] },
  // ROLLING_SESSION_MS and ROLLING_MARGIN_MS try other settings (the defaults: the library's).
  sessionTimeoutMs: Number(process.env.ROLLING_SESSION_MS ?? 15_000),
  leaseMarginMs: process.env.ROLLING_MARGIN_MS === undefined ? undefined : Number(process.env.ROLLING_MARGIN_MS),
  waitTimeoutMs: 60_000,
  holdMs: 20,
  thinkMs: 5,
  seed: 20261128,
  callers: 1,
  cohort: false,
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string): void => console.log(`[rolling] ${line}`);

interface RestartFigures {
  member: number;
  wasLeader: boolean;
  /** The longest stretch without a grant, from the stop to SETTLE_MS after it serves again. */
  stallMs: number;
}

interface RunFigures {
  acquisitions: number;
  lost: number;
  failed: number;
  timedOut: number;
  overlaps: number;
  violations: string[];
  restarts: RestartFigures[];
  lostDetails: string[];
}

async function runOnce(run: number): Promise<RunFigures> {
  const ensemble = await startZkEnsemble(3, { tickMs: 2000 });
  const harness = new FaultHarness(ensemble, { ...OPTIONS, seed: OPTIONS.seed + run });
  const windows: { member: number; wasLeader: boolean; from: number; to: number }[] = [];
  try {
    await harness.start();
    await sleep(3000);
    for (const server of ensemble.servers) {
      const leader = await ensemble.leader().catch(() => undefined);
      const wasLeader = leader?.id === server.id;
      harness.record('stop-server', `zk${server.id}`, wasLeader ? 'leader' : 'follower');
      const from = monotonicMs();
      await server.stop();
      await sleep(DOWN_MS);
      harness.record('start-server', `zk${server.id}`);
      await server.start();
      await harness.healthy();
      await sleep(SETTLE_MS);
      windows.push({ member: server.id, wasLeader, from, to: monotonicMs() });
      log(`run ${run}: member ${server.id} (${wasLeader ? 'leader' : 'follower'}) restarted`);
    }
    const { result } = await harness.finish();
    const events = harness.events;
    const lost = events.filter((e): e is Extract<ClientEvent, { type: 'lost' }> => e.type === 'lost');
    return {
      acquisitions: result.figures.acquisitions,
      lost: lost.length,
      failed: result.figures.failures,
      timedOut: result.figures.timeouts,
      overlaps: result.violations.filter((v) => v.endsWith(' at once')).length,
      violations: result.violations,
      restarts: windows.map((w) => ({ member: w.member, wasLeader: w.wasLeader, stallMs: longestGap(events, w.from, w.to) })),
      lostDetails: [...new Set(lost.map((e) => e.detail.replace(/\d+ ms/g, 'N ms').slice(0, 240)))],
    };
  } finally {
    await ensemble.stop();
  }
}

/** The longest interval in [from, to] without a grant. */
function longestGap(events: readonly ClientEvent[], from: number, to: number): number {
  const grants = events.filter((e) => e.type === 'granted' && e.t >= from && e.t <= to).map((e) => e.t);
  let last = from;
  let longest = 0;
  for (const t of [...grants, to]) {
    longest = Math.max(longest, t - last);
    last = t;
  }
  return longest;
}

const results: RunFigures[] = [];
for (let run = 1; run <= RUNS; run++) {
  const figures = await runOnce(run);
  results.push(figures);
  log(
    `run ${run}: ${figures.acquisitions} acquisitions, ${figures.lost} lost, ${figures.failed} failed, ${figures.timedOut} timed out, ` +
      `${figures.overlaps} overlaps, ${figures.violations.length} violations; stall per restart: ` +
      figures.restarts.map((r) => `zk${r.member}${r.wasLeader ? ' (leader)' : ''} ${Math.round(r.stallMs)} ms`).join(', '),
  );
  for (const detail of figures.lostDetails) log(`  lost: ${detail}`);
  for (const violation of figures.violations.slice(0, 10)) log(`  violation: ${violation}`);
}

const table = [
  `ZooKeeper ${zookeeperVersion()}, 3 members, tickTime 2000, syncLimit 5; 3 client processes (sessionTimeoutMs ${OPTIONS.sessionTimeoutMs}, leaseMarginMs ${OPTIONS.leaseMarginMs ?? 'default'}, no cohort), ` +
    `3 exclusive locks; each member stopped ${DOWN_MS} ms, started, ${SETTLE_MS} ms to sync. \`npm run test:rolling-restart\`.`,
  '',
  '| run | acquisitions | lost | failed | timed out | overlaps | stall per restart (member) |',
  '|---|---|---|---|---|---|---|',
  ...results.map(
    (r, i) =>
      `| ${i + 1} | ${r.acquisitions} | **${r.lost}** | ${r.failed} | ${r.timedOut} | **${r.overlaps}** | ` +
      `${r.restarts.map((x) => `${Math.round(x.stallMs)} ms (zk${x.member}${x.wasLeader ? ', leader' : ''})`).join(', ')} |`,
  ),
].join('\n');
console.log(table);
if (process.argv.includes('--write')) writeReportSection('rolling-restart', `## Rolling restart\n\n${table}`);
process.exit(results.every((r) => r.overlaps === 0 && r.violations.length === 0) ? 0 : 1);

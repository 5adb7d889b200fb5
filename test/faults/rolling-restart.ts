/**
 * The rolling-restart trial (see rolling-restart-run.ts): ROLLING_RUNS runs (default 1), then a
 * table of lost holds, failed acquires, overlaps and the stall at each restart. Run with
 * `npm run test:rolling-restart`; `--write` puts the table in docs/faults.md. ROLLING_DOWN_MS,
 * ROLLING_SESSION_MS and ROLLING_MARGIN_MS try other settings (the defaults: the library's).
 */
import { describeStalls, ROLLING_DEFAULTS, type RollingFigures, runRollingRestart } from './rolling-restart-run.js';
import { writeReportSection, zookeeperVersion } from './report-file.js';

const env = (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name]));
const RUNS = env('ROLLING_RUNS') ?? 1;
const options = {
  downMs: env('ROLLING_DOWN_MS'),
  sessionTimeoutMs: env('ROLLING_SESSION_MS'),
  leaseMarginMs: env('ROLLING_MARGIN_MS'),
};
const log = (line: string): void => console.log(`[rolling] ${line}`);

const results: RollingFigures[] = [];
for (let run = 1; run <= RUNS; run++) {
  const figures = await runRollingRestart({ ...options, seed: ROLLING_DEFAULTS.seed + run, log: (line) => log(`run ${run}: ${line}`) });
  results.push(figures);
  log(
    `run ${run}: ${figures.acquisitions} acquisitions, ${figures.lost} lost, ${figures.failed} failed, ${figures.timedOut} timed out, ` +
      `${figures.overlaps} overlaps, ${figures.violations.length} violations; stall per restart: ${describeStalls(figures.restarts)}`,
  );
  for (const detail of figures.lostDetails) log(`  lost: ${detail}`);
  log(`run ${run}: the idle session's long hold: ${figures.longHoldLost === undefined ? 'held throughout' : `lost (${figures.longHoldLost})`}`);
  for (const violation of figures.violations.slice(0, 10)) log(`  violation: ${violation}`);
}

const table = [
  `ZooKeeper ${zookeeperVersion()}, 3 members, tickTime 2000, syncLimit 5; 3 client processes (sessionTimeoutMs ${options.sessionTimeoutMs ?? ROLLING_DEFAULTS.sessionTimeoutMs}, ` +
    `leaseMarginMs ${options.leaseMarginMs ?? 'default'}, no cohort), 3 exclusive locks; each member stopped ${options.downMs ?? ROLLING_DEFAULTS.downMs} ms, started, ` +
    `${ROLLING_DEFAULTS.settleMs} ms to sync. \`npm run test:rolling-restart\`.`,
  '',
  '| run | acquisitions | lost | failed | timed out | overlaps | idle hold | stall per restart (member) |',
  '|---|---|---|---|---|---|---|---|',
  ...results.map(
    (r, i) =>
      `| ${i + 1} | ${r.acquisitions} | **${r.lost}** | ${r.failed} | ${r.timedOut} | **${r.overlaps}** | ${r.longHoldLost === undefined ? 'kept' : '**lost**'} | ` +
      `${r.restarts.map((x) => `${Math.round(x.stallMs)} ms (zk${x.member}${x.wasLeader ? ', leader' : ''})`).join(', ')} |`,
  ),
].join('\n');
console.log(table);
if (process.argv.includes('--write')) writeReportSection('rolling-restart', `## Rolling restart\n\n${table}`);
process.exit(results.every((r) => r.overlaps === 0 && r.violations.length === 0) ? 0 : 1);

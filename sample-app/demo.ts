/**
 * `npm run demo`: a throw-away ZooKeeper and three app processes sharing one counter file. Fires
 * concurrent increments at them without a lock, with @DistributedLock and with withLock(), then
 * watches the cron job run on one instance per second. Stops everything it started; exits non-zero
 * if a locked increment was lost or a cron second ran twice.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, startZkServer, type ZkServer } from '../test/support/zk-server.js';
import { type AppProcess, startAppProcess } from './app-process.js';

const INSTANCES = ['a', 'b', 'c'];
const REQUESTS = 300;
const ENDPOINTS = ['unsafe', 'decorated', 'direct'] as const;
const CRON_SECONDS = 3;
const REQUEST_TIMEOUT_MS = 20_000;
const DEMO_TIMEOUT_MS = 55_000;

interface Round {
  endpoint: string;
  expected: number;
  actual: number;
  failed: number;
  perSecond: number;
  firstFailure?: string;
}

async function request(app: AppProcess, method: 'GET' | 'POST', path: string): Promise<Response> {
  return fetch(`${app.url}${path}`, { method, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
}

async function readCounter(app: AppProcess): Promise<number> {
  return ((await (await request(app, 'GET', '/counter')).json()) as { value: number }).value;
}

/** Resets the counter and sends every request at once, round-robin over the instances. */
async function round(apps: AppProcess[], endpoint: string): Promise<Round> {
  await request(apps[0]!, 'POST', '/counter/reset');
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const response = await request(apps[i % apps.length]!, 'POST', `/counter/${endpoint}`);
      return { ok: response.ok, text: `${response.status} ${await response.text()}` };
    }),
  );
  const perSecond = REQUESTS / ((performance.now() - started) / 1000);
  const succeeded = answers.filter((a) => a.ok).length;
  // Only increments a client was told succeeded are owed; a failed request is counted apart.
  return {
    endpoint,
    expected: succeeded,
    actual: await readCounter(apps[0]!),
    failed: REQUESTS - succeeded,
    perSecond,
    firstFailure: answers.find((a) => !a.ok)?.text,
  };
}

function printRounds(rounds: Round[]): void {
  const rows = [
    ['endpoint', 'expected', 'actual', 'lost updates', 'failed', 'requests/s'],
    ...rounds.map((r) => [r.endpoint, r.expected, r.actual, r.expected - r.actual, r.failed, r.perSecond.toFixed(0)].map(String)),
  ];
  for (const [i, row] of rows.entries()) {
    console.log(`  ${row.map((cell, column) => (column === 0 ? cell.padEnd(10) : cell.padStart(14))).join('')}`);
    if (i === 0) console.log(`  ${'-'.repeat(10 + 14 * (row.length - 1))}`);
  }
  for (const r of rounds) if (r.firstFailure) console.log(`  ${r.endpoint}: first failed answer: ${r.firstFailure}`);
}

/** Runs per whole second of the window [from, to), by the second each run recorded. */
function cronRunsPerSecond(logFile: string, from: number, to: number): { perSecond: Map<number, string[]>; byInstance: Map<string, number> } {
  const perSecond = new Map<number, string[]>();
  for (let second = from; second < to; second++) perSecond.set(second, []);
  const byInstance = new Map(INSTANCES.map((name) => [name, 0]));
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const [second, instance] = line.split(' ');
    const runs = perSecond.get(Number(second));
    if (!runs || !instance) continue;
    runs.push(instance);
    byInstance.set(instance, (byInstance.get(instance) ?? 0) + 1);
  }
  return { perSecond, byInstance };
}

async function main(): Promise<boolean> {
  const workDir = mkdtempSync(join(tmpdir(), 'zk-lock-demo-'));
  process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  const counterFile = join(workDir, 'counter.json');
  const cronLog = join(workDir, 'cron.log');
  writeFileSync(cronLog, '');
  let zk: ZkServer | undefined;
  const apps: AppProcess[] = [];
  try {
    console.log('Starting ZooKeeper ...');
    zk = await startZkServer({ tickMs: 2000 });
    const ports = await freePorts(INSTANCES.length);
    const env = { ZK_CONNECT: zk.connectString, COUNTER_FILE: counterFile, CRON_LOG_FILE: cronLog };
    const started = await Promise.allSettled(INSTANCES.map((name, i) => startAppProcess(name, ports[i]!, env)));
    for (const result of started) if (result.status === 'fulfilled') apps.push(result.value);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    console.log(`ZooKeeper at ${zk.connectString}; instances ${apps.map((a) => `${a.name} ${a.url}`).join(', ')}\n`);

    console.log(`${REQUESTS} concurrent increments per endpoint, round-robin over ${apps.length} instances:\n`);
    const rounds: Round[] = [];
    for (const endpoint of ENDPOINTS) rounds.push(await round(apps, endpoint));
    printRounds(rounds);

    // Whole seconds only, with a margin after the last so its run has been written.
    const from = Math.ceil(Date.now() / 1000);
    const to = from + CRON_SECONDS;
    await sleep(to * 1000 + 400 - Date.now());
    const { perSecond, byInstance } = cronRunsPerSecond(cronLog, from, to);
    const counts = [...perSecond.values()].map((runs) => runs.length);
    const twice = counts.filter((n) => n > 1).length;
    const missed = counts.filter((n) => n === 0).length;
    console.log(`\ncron:report over ${CRON_SECONDS} s: ${counts.filter((n) => n === 1).length} seconds with exactly one run, ${twice} with more than one, ${missed} with none`);
    console.log(`  per second: ${[...perSecond].map(([second, runs]) => `${second}: ${runs.join('+') || '-'}`).join(', ')}`);
    console.log(`  runs by instance: ${[...byInstance].map(([name, n]) => `${name} ${n}`).join(', ')}`);
    if (missed > 0) console.log('  (a second without a run: an instance was too slow to fire, or the lock was still held)');

    const lockedLost = rounds.some((r) => r.endpoint !== 'unsafe' && (r.expected !== r.actual || r.failed > 0));
    return !lockedLost && twice === 0;
  } finally {
    const stopped = await Promise.all(apps.map(async (app) => `${app.name}: ${await app.stop()}`));
    if (stopped.length > 0) console.log(`\nStopped the instances (${stopped.join(', ')})`);
    await zk?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

// A hang anywhere must not leave the run waiting: exiting kills the instances and ZooKeeper.
setTimeout(() => {
  console.error(`The demo did not finish within ${DEMO_TIMEOUT_MS / 1000} s; stopping everything.`);
  process.exit(1);
}, DEMO_TIMEOUT_MS).unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

main().then(
  (passed) => {
    console.log(passed ? 'PASS: no locked update lost, one cron run per second' : 'FAIL: see above');
    if (!passed) process.exitCode = 1;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);

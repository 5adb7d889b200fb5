/**
 * HTTP: the same handler unlocked, with @DistributedLock, and calling LockService.withLock, in one
 * Nest app process (bench/http/), loaded by autocannon from this process at the same concurrency.
 * Each request locks `item:<id>`, the ids cycling through a set several times larger than the number
 * of connections, so requests seldom wait for each other: this measures the cost of taking a lock
 * per request, and the decorator's cost over calling the service directly.
 */
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { freePorts } from '../../test/support/zk-server.js';
import { exited, startChild } from '../support/children.js';
import { type BenchContext, rotate } from '../support/context.js';
import { diffCounters, readCounters } from '../support/mntr.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, type Figure } from '../support/stats.js';

const ENDPOINTS = ['none', 'decorated', 'direct'] as const;
type Endpoint = (typeof ENDPOINTS)[number];
const LABELS: Record<Endpoint, string> = {
  none: 'no lock (the HTTP floor)',
  decorated: '@DistributedLock',
  direct: 'LockService.withLock',
};

interface Settings {
  connections: number;
  ids: number;
  warmupSeconds: number;
  seconds: number;
  rounds: number;
}

interface RoundFigures {
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  zkRequestsPerRequest: number;
  errors: number;
}

export async function runHttp(ctx: BenchContext, s: Settings): Promise<WorkloadResult> {
  const [port] = await freePorts(1);
  const app = startChild(process.execPath, [join(ctx.buildDir, 'bench/http/main.js')], {
    env: { ...process.env, ZK_CONNECT: ctx.server.connectString, SESSION_TIMEOUT_MS: String(ctx.sessionTimeoutMs), PORT: String(port) },
  });
  const errors: string[] = [];
  createInterface({ input: app.stderr! }).on('line', (line) => {
    errors.push(line);
    console.error(`  [http-app] ${line}`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the HTTP app was not ready within 30 s')), 30_000);
      createInterface({ input: app.stdout! }).on('line', (line) => {
        if (line === `ready ${port}`) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exited(app).then((how) => reject(new Error(`the HTTP app ended (${how}) before it was ready: ${errors.join('\n')}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    ctx.log(`http: warm-up, ${s.warmupSeconds} s per endpoint`);
    for (const endpoint of ENDPOINTS) await load(url, endpoint, s, s.warmupSeconds);
    const rounds = new Map<Endpoint, RoundFigures[]>(ENDPOINTS.map((e) => [e, []]));
    for (let round = 0; round < s.rounds; round++) {
      ctx.log(`http: round ${round + 1}/${s.rounds}`);
      for (const endpoint of rotate(ENDPOINTS, round)) {
        const before = await readCounters(ctx.server.clientPort);
        const handledBefore = await handled(url, endpoint);
        const result = await load(url, endpoint, s, s.seconds);
        const handledAfter = await handled(url, endpoint);
        const after = await readCounters(ctx.server.clientPort);
        rounds.get(endpoint)!.push({
          rps: result.requests.total / (result.duration || s.seconds),
          mean: result.latency.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          zkRequestsPerRequest: diffCounters(before, after).requests / (handledAfter - handledBefore),
          errors: result.errors + result.non2xx + result.timeouts,
        });
      }
    }
    return summarise(s, rounds);
  } finally {
    app.kill('SIGTERM');
    const timer = setTimeout(() => app.kill('SIGKILL'), 5000);
    await exited(app);
    clearTimeout(timer);
  }
}

async function handled(url: string, endpoint: Endpoint): Promise<number> {
  const response = await fetch(`${url}/handled`);
  return ((await response.json()) as Record<Endpoint, number>)[endpoint];
}

/** Loads one endpoint, then waits a moment: requests cut off at the end still finish in the app. */
async function load(url: string, endpoint: Endpoint, s: Settings, seconds: number): Promise<autocannon.Result> {
  let next = 0;
  const result = await autocannon({
    url,
    connections: s.connections,
    duration: seconds,
    requests: [{ method: 'POST', setupRequest: (request) => ({ ...request, path: `/${endpoint}/${next++ % s.ids}` }) }],
  });
  await new Promise((r) => setTimeout(r, 200));
  return result;
}

function summarise(s: Settings, rounds: Map<Endpoint, RoundFigures[]>): WorkloadResult {
  const of = (e: Endpoint, key: keyof RoundFigures): Figure => figure(rounds.get(e)!.map((r) => r[key]));
  const paired = (e: Endpoint, base: Endpoint, key: keyof RoundFigures): Figure =>
    figure(rounds.get(e)!.map((r, i) => r[key] / rounds.get(base)![i]![key]));
  const rows = ENDPOINTS.map((e) => ({
    subject: LABELS[e],
    cells: {
      rps: of(e, 'rps'),
      mean: of(e, 'mean'),
      p50: of(e, 'p50'),
      p99: of(e, 'p99'),
      zk: of(e, 'zkRequestsPerRequest'),
      errors: figure(rounds.get(e)!.map((r) => r.errors)).max,
      vsDirect: e === 'none' ? undefined : paired(e, 'direct', 'rps'),
    },
  }));
  const errors = ENDPOINTS.reduce((n, e) => n + rounds.get(e)!.reduce((m, r) => m + r.errors, 0), 0);
  const decoratedVsDirect = paired('decorated', 'direct', 'rps').median;
  const checks: Check[] = [
    {
      target: 'every request answered 2xx',
      measured: `${formatNumber(errors)} errors, non-2xx or timeouts`,
      met: errors === 0,
    },
  ];
  return {
    id: 'http',
    title: `HTTP: one Nest app, ${s.connections} autocannon connections`,
    columns: [
      { key: 'rps', label: 'requests/s', digits: 0 },
      { key: 'mean', label: 'mean ms', digits: 2 },
      { key: 'p50', label: 'p50 ms', digits: 0 },
      { key: 'p99', label: 'p99 ms', digits: 0 },
      { key: 'zk', label: 'ZK requests/request', digits: 2 },
      { key: 'errors', label: 'errors (worst round)', digits: 0 },
      { key: 'vsDirect', label: 'requests/s vs direct', digits: 2, ratio: true },
    ],
    rows,
    checks,
    notes: [
      `${decoratedVsDirect < 0.95 ? 'SLOWER: ' : ''}@DistributedLock vs LockService.withLock (no target set): ${formatNumber(decoratedVsDirect, 2)}x the requests/s, mean latency ${formatNumber(of('decorated', 'mean').median, 2)} ms vs ${formatNumber(of('direct', 'mean').median, 2)} ms.`,
      `${s.rounds} rounds of ${s.seconds} s per endpoint after ${s.warmupSeconds} s of warm-up each; locks on ${s.ids} ids in turn. autocannon reports latency percentiles in whole ms. ZK requests/request divides the server's count by the requests the app handled (including any cut off at the end of a load).`,
    ],
    details: { settings: s, rounds: Object.fromEntries(rounds) },
  };
}

/**
 * `ensemble-writes`: the 3-node ensemble's write throughput, for the capacity model in
 * docs/benchmarks.md, and (when asked) a 5-node ensemble's beside it, started for this workload on
 * the same machine and stopped after it. The raw client (no lock recipe) in several processes, a session each, keeps k
 * writes in flight per session: create an ephemeral sequential node (as a lock's node is), delete
 * it, again. From one write at a time in one session (latency-bound) to many sessions with many in
 * flight (the servers saturated). Reported: write transactions per second counted by the leader
 * (`zk_proposal_count`), the client's write latency, and the servers' CPU per transaction.
 */
import type { LineWorker } from '../support/children.js';
import { type BenchContext, rotate, stopWorkers } from '../support/context.js';
import { diffCounters } from '../support/mntr.js';
import type { WritesAnswer } from '../support/protocol.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, percentile } from '../support/stats.js';
import { describeSpread, type EnsembleTarget, evenQuota, placedWorkers } from '../support/target.js';

export interface WritesSettings {
  /** Sessions (one process each) and writes in flight per session, one row each... */
  variants: { sessions: number; inflight: number }[];
  /** ...on each of these ensembles (members; 3 is the one the other workloads use). */
  sizes: number[];
  durationMs: number;
  rounds: number;
}

interface WindowFigures {
  txnsPerS: number;
  proposalsPerWrite: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  serverCpuUsPerTxn: number;
}

interface Row {
  size: number;
  sessions: number;
  inflight: number;
}

const key = (r: Row): string => `${r.size}:${r.sessions}x${r.inflight}`;

export async function runWrites(ctx: BenchContext, s: WritesSettings): Promise<WorkloadResult> {
  const most = Math.max(...s.variants.map((v) => v.sessions));
  const root = `/bench-writes-${Date.now().toString(36)}`;
  const labels = Array.from({ length: most }, (_, i) => `writes-${i + 1}`);
  const rows: Row[] = s.sizes.flatMap((size) => s.variants.map((v) => ({ size, ...v })));
  const rounds = new Map<string, WindowFigures[]>(rows.map((r) => [key(r), []]));
  const ensembles = new Map<number, { target: EnsembleTarget; workers: LineWorker[]; spread: string }>();
  try {
    for (const size of s.sizes) {
      const target = size === 3 ? await ctx.ensemble() : await ctx.otherEnsemble(size);
      ensembles.set(size, { target, workers: [], spread: '' });
      const { workers, members } = await placedWorkers(ctx, target, 'raw-pipelined', labels.map((l) => `${l}-of-${size}`), evenQuota(target, most));
      ensembles.set(size, { target, workers, spread: describeSpread(target, members) });
      ctx.log(`ensemble-writes: warm-up, ${size} nodes`);
      await windowOf(workers, root, 8, ctx.quick ? 300 : 3000);
    }
    for (let round = 0; round < s.rounds; round++) {
      ctx.log(`ensemble-writes: round ${round + 1}/${s.rounds}`);
      for (const row of rotate(rows, round)) {
        const { target, workers } = ensembles.get(row.size)!;
        const before = await target.counters();
        const answers = await windowOf(workers.slice(0, row.sessions), root, row.inflight, s.durationMs);
        const delta = diffCounters(before, await target.counters());
        const inWindow = answers.reduce((n, a) => n + a.writes, 0);
        const all = answers.reduce((n, a) => n + a.allWrites, 0);
        const latencies = answers.flatMap((a) => a.latenciesUs);
        rounds.get(key(row))!.push({
          // The leader's count over the readings, scaled to the writes completed inside the window.
          txnsPerS: ((delta.proposals * inWindow) / all / s.durationMs) * 1000,
          proposalsPerWrite: delta.proposals / all,
          latencyP50Ms: percentile(latencies, 50) / 1000,
          latencyP99Ms: percentile(latencies, 99) / 1000,
          serverCpuUsPerTxn: (delta.serverCpuMs * 1000) / delta.proposals,
        });
      }
    }
  } finally {
    await stopWorkers([...ensembles.values()].flatMap((e) => e.workers));
    // Only the 3-node ensemble serves other workloads; another size stops here.
    await Promise.allSettled([...ensembles].filter(([size]) => size !== 3).map(([, e]) => e.target.ensemble.stop()));
  }
  const of = (k: string, f: keyof WindowFigures) => figure(rounds.get(k)!.map((r) => r[f]));
  const best = (size: number): Row =>
    rows.filter((r) => r.size === size).reduce((a, b) => (of(key(b), 'txnsPerS').median > of(key(a), 'txnsPerS').median ? b : a));
  const checks: Check[] = [
    {
      target: 'the leader counts one write transaction per client write (nothing else writing meanwhile)',
      measured: rows.map((r) => formatNumber(of(key(r), 'proposalsPerWrite').median, 2)).join(', '),
      met: rows.every((r) => Math.abs(of(key(r), 'proposalsPerWrite').median - 1) < 0.02),
    },
  ];
  return {
    id: 'ensemble-writes',
    title: `Write throughput of ${s.sizes.map((n) => `a ${n}-node`).join(' and ')} ensemble (data on disk, fsync on, all on this machine): raw client, create + delete of ephemeral nodes`,
    columns: [
      { key: 'rate', label: 'write txns/s', digits: 0 },
      { key: 'p50', label: 'write p50 ms', digits: 2 },
      { key: 'p99', label: 'write p99 ms', digits: 2 },
      { key: 'cpu', label: 'server CPU µs/txn', digits: 0 },
      { key: 'perWrite', label: 'leader txns/write', digits: 2 },
    ],
    rows: rows.map((r) => ({
      subject: `${r.size} nodes: ${r.sessions} session(s) x ${r.inflight} in flight`,
      cells: {
        rate: of(key(r), 'txnsPerS'),
        p50: of(key(r), 'latencyP50Ms'),
        p99: of(key(r), 'latencyP99Ms'),
        cpu: of(key(r), 'serverCpuUsPerTxn'),
        perWrite: of(key(r), 'proposalsPerWrite'),
      },
    })),
    checks,
    notes: [
      `${s.rounds} round(s) of ${s.durationMs / 1000} s per row, the rows in turn (rotating order), after a warm-up; sessions ${ctx.quick ? 'where they landed (--quick)' : 'placed evenly'} (${[...ensembles].map(([size, e]) => `${size} nodes: ${e.spread}`).join('; ')}; a row of n sessions uses the first n).`,
      "write txns/s: the leader's zk_proposal_count over the window; server CPU: the server JVMs' user + system time per transaction (10 ms ticks). Every server and client shares the machine's 2 cores.",
      `highest: ${s.sizes.map((size) => `${size} nodes ${formatNumber(of(key(best(size)), 'txnsPerS').median)} write txns/s (${best(size).sessions} sessions x ${best(size).inflight} in flight)`).join('; ')}; the capacity model in docs/benchmarks.md starts from these.`,
    ],
    details: { settings: s, spreads: Object.fromEntries([...ensembles].map(([size, e]) => [size, e.spread])), rounds: Object.fromEntries(rounds) },
  };
}

/** Every worker writes for the same window, starting at the same wall-clock instant. */
function windowOf(workers: LineWorker[], root: string, inflight: number, durationMs: number): Promise<WritesAnswer[]> {
  const startAt = Date.now() + 300;
  return Promise.all(
    workers.map((w, i) => w.ask<WritesAnswer>({ name: 'writes', path: `${root}/s${i}`, inflight, startAt, durationMs }, durationMs + 120_000)),
  );
}

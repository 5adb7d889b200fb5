/**
 * The simple lock (one ephemeral node per name, unfair, herd on release) against the fair lock
 * (a queue of sequential nodes under a container parent), uncontended, each in its own process:
 * - on one name used over and over (the parent of the fair lock's queue exists all along);
 * - on a new name every cycle, as a lock per entity is used (the fair lock creates the parent each
 *   time; ZooKeeper reaps it later);
 * with the raw client's floor beside them for the hot case. Contended behaviour is the separate
 * `simple-lock-sessions` workload (8 processes, see contention.ts): where unfairness shows, in how
 * evenly the processes are served.
 */
import type { LineWorker } from '../support/children.js';
import { type BenchContext, connectedWorker, type Impl, rotate, stopWorkers } from '../support/context.js';
import { diffCounters, readCounters } from '../support/mntr.js';
import type { UncontendedAnswer } from '../support/protocol.js';
import type { WorkloadResult } from '../support/report.js';
import { figure, type Figure, percentile } from '../support/stats.js';
import type { Workload } from './index.js';

interface Variant {
  readonly key: string;
  readonly impl: Impl;
  readonly fresh: boolean;
  readonly label: string;
}

const VARIANTS: Variant[] = [
  { key: 'raw-hot', impl: 'raw-pipelined', fresh: false, label: 'raw client floor (create+list, delete), one name' },
  { key: 'fair-hot', impl: 'fairlock', fresh: false, label: 'FairLock, one name' },
  { key: 'simple-hot', impl: 'simplelock', fresh: false, label: 'SimpleLock, one name' },
  { key: 'fair-fresh', impl: 'fairlock', fresh: true, label: 'FairLock, a new name every cycle' },
  { key: 'simple-fresh', impl: 'simplelock', fresh: true, label: 'SimpleLock, a new name every cycle' },
];

interface RoundFigures {
  p50Us: number;
  p99Us: number;
  cyclesPerSec: number;
  requestsPerCycle: number;
}

async function runSimpleLock(ctx: BenchContext): Promise<WorkloadResult> {
  const settings = ctx.quick ? { warmup: 200, cycles: 200, rounds: 1 } : { warmup: 5000, cycles: 2000, rounds: 5 };
  const workers = new Map<string, LineWorker>();
  const server = ctx.server;
  const path = (v: Variant): string => `/bench-simple/${v.key}`;
  try {
    for (const v of VARIANTS) workers.set(v.key, await connectedWorker(ctx, server, v.impl, `simple-${v.key}`));
    ctx.log(`simple-lock: warm-up, ${settings.warmup} cycles each`);
    for (const v of VARIANTS) await workers.get(v.key)!.ask({ name: 'uncontended', path: path(v), cycles: settings.warmup, ...(v.fresh ? { fresh: 1 as const } : {}) });
    const rounds = new Map<string, RoundFigures[]>(VARIANTS.map((v) => [v.key, []]));
    for (let round = 0; round < settings.rounds; round++) {
      ctx.log(`simple-lock: round ${round + 1}/${settings.rounds}`);
      for (const v of rotate(VARIANTS, round)) {
        const before = await readCounters(server.clientPort);
        const answer = await workers
          .get(v.key)!
          .ask<UncontendedAnswer>({ name: 'uncontended', path: path(v), cycles: settings.cycles, ...(v.fresh ? { fresh: 1 as const } : {}) });
        const after = await readCounters(server.clientPort);
        rounds.get(v.key)!.push({
          p50Us: percentile(answer.latenciesNs, 50) / 1000,
          p99Us: percentile(answer.latenciesNs, 99) / 1000,
          cyclesPerSec: answer.cycles / (answer.elapsedNs / 1e9),
          requestsPerCycle: diffCounters(before, after).requests / answer.cycles,
        });
      }
    }
    const of = (key: string, metric: keyof RoundFigures): Figure => figure(rounds.get(key)!.map((r) => r[metric]));
    const ratio = (key: string, base: string, metric: keyof RoundFigures): Figure =>
      figure(rounds.get(key)!.map((r, i) => r[metric] / rounds.get(base)![i]![metric]));
    const fairOf = (v: Variant): string => (v.fresh ? 'fair-fresh' : 'fair-hot');
    return {
      id: 'simple-lock',
      title: 'The simple lock against the fair lock, uncontended (one session each)',
      columns: [
        { key: 'p50', label: 'p50 µs', digits: 0 },
        { key: 'p99', label: 'p99 µs', digits: 0 },
        { key: 'rate', label: 'cycles/s', digits: 0 },
        { key: 'requests', label: 'requests/cycle', digits: 2 },
        { key: 'vsFair', label: 'cycles/s vs FairLock (same names)', digits: 2, ratio: true },
      ],
      rows: VARIANTS.map((v) => ({
        subject: v.label,
        cells: {
          p50: of(v.key, 'p50Us'),
          p99: of(v.key, 'p99Us'),
          rate: of(v.key, 'cyclesPerSec'),
          requests: of(v.key, 'requestsPerCycle'),
          vsFair: v.impl === 'raw-pipelined' ? undefined : ratio(v.key, fairOf(v), 'cyclesPerSec'),
        },
      })),
      checks: [],
      notes: [
        'A new name every cycle: the fair lock finds no parent, creates it as a container and creates its node again; ZooKeeper reaps the idle containers later (server work not counted here).',
        `${settings.rounds} rounds of ${settings.cycles} cycles per variant, after ${settings.warmup} warm-up cycles; ± is half the range of the rounds.`,
      ],
      details: { settings, rounds: Object.fromEntries(rounds) },
    };
  } finally {
    await stopWorkers(workers.values());
  }
}

export const simpleLockWorkload: Workload = {
  id: 'simple-lock',
  description: 'the simple lock against the fair lock, uncontended: one name, and a new name every cycle',
  run: runSimpleLock,
};

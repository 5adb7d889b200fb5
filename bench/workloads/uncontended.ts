/**
 * Uncontended acquire + release on one lock, one session, one caller: latency per cycle (p50, p99),
 * cycles per second, and server requests per cycle (mntr). Baselines in the same run: the raw
 * client's floor (create + list pipelined, then delete), the raw client's three sequential round
 * trips, and Curator's InterProcessMutex. Each implementation runs in its own process with its own
 * session; all are warmed up the same way. A round is cut into short blocks, and the implementations
 * take turns block by block (in a rotating order), so that each one samples the whole round: the
 * machine's drift, which moves the floor itself by a quarter within seconds, falls on all of them
 * alike. Each figure is the median of the rounds; a ratio is the median of the per-round ratios.
 */
import type { LineWorker } from '../support/children.js';
import { type BenchContext, connectedWorker, type Impl, rotate, stopWorkers } from '../support/context.js';
import { diffCounters } from '../support/mntr.js';
import type { UncontendedAnswer } from '../support/protocol.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, type Figure, percentile } from '../support/stats.js';
import { type BenchTarget, describeSpread, ENSEMBLE_COLUMNS, type EnsembleTarget, placedWorkers } from '../support/target.js';

const LABELS: Record<Impl, string> = {
  'raw-pipelined': 'raw client: create+list pipelined, delete (floor)',
  'raw-sequential': 'raw client: create, list, delete (3 round trips)',
  'raw-promise': 'raw client behind promises: create+list, delete',
  curator: 'Curator InterProcessMutex',
  fairlock: 'ours: FairLock acquire+release',
  simplelock: 'ours: SimpleLock acquire+release',
  lockservice: 'ours: LockService acquire+release',
  'lockservice-solo': 'ours: LockService acquire+release, cohort: false',
};

interface Settings {
  warmup: number;
  /** Unmeasured cycles before each block, after the process sat idle while the others ran. */
  rewarm: number;
  /** Measured cycles per implementation and round... */
  cycles: number;
  /** ...in this many blocks. */
  blocks: number;
  rounds: number;
}

export interface UncontendedOptions {
  /** The implementations to run (default: every raw baseline, Curator, FairLock, LockService). */
  impls?: Impl[];
  /** Target: our p50 at most this many times the floor's. @default 1.10 */
  maxP50VsFloor?: number;
}

/** One implementation's share of a round, summed over its blocks. */
class RoundTally {
  latenciesNs: number[] = [];
  cycles = 0;
  elapsedNs = 0;
  cpuNs = 0;
  requests = 0;
  proposals = 0;
  serverCpuMs = 0;

  add(answer: UncontendedAnswer, requests: number, proposals: number, serverCpuMs: number): void {
    for (const latency of answer.latenciesNs) this.latenciesNs.push(latency);
    this.cycles += answer.cycles;
    this.elapsedNs += answer.elapsedNs;
    this.cpuNs += answer.cpuNs;
    this.requests += requests;
    this.proposals += proposals;
    this.serverCpuMs += serverCpuMs;
  }

  figures(): RoundFigures {
    return {
      p50Us: percentile(this.latenciesNs, 50) / 1000,
      p99Us: percentile(this.latenciesNs, 99) / 1000,
      cyclesPerSec: this.cycles / (this.elapsedNs / 1e9),
      cpuUsPerCycle: this.cpuNs / 1000 / this.cycles,
      requestsPerCycle: this.requests / this.cycles,
      txnsPerCycle: this.proposals / this.cycles,
      serverCpuUsPerCycle: (this.serverCpuMs * 1000) / this.cycles,
    };
  }
}

interface RoundFigures {
  p50Us: number;
  p99Us: number;
  cyclesPerSec: number;
  cpuUsPerCycle: number;
  requestsPerCycle: number;
  /** Write transactions (the leader's proposals) per cycle; ensembles only. */
  txnsPerCycle: number;
  /** CPU time of the three servers per cycle, µs; ensembles only. */
  serverCpuUsPerCycle: number;
}

export async function runUncontended(
  ctx: BenchContext,
  target: BenchTarget,
  id: string,
  settings: Settings,
  options: UncontendedOptions = {},
): Promise<WorkloadResult> {
  const impls: Impl[] = (options.impls ?? ['raw-pipelined', 'raw-sequential', 'raw-promise', 'curator', 'fairlock', 'lockservice']).filter(
    (impl) => impl !== 'curator' || ctx.curator,
  );
  const workers = new Map<Impl, LineWorker>();
  const path = (impl: Impl): string => `/bench-${id}/${impl}`;
  let placement: string | undefined;
  try {
    if (target.kind === 'ensemble') {
      // Every session on the same follower, so that each implementation's writes take the same path
      // (forwarded to the leader), as two thirds of a production ensemble's clients' do.
      const ensemble = target as EnsembleTarget;
      const follower = ensemble.members[0]!;
      const placed: number[] = [];
      for (const impl of impls) {
        const { workers: [worker], members } = await placedWorkers(ctx, ensemble, impl, [impl], new Map([[follower, 1]]));
        workers.set(impl, worker!);
        placed.push(...members);
      }
      placement = placed.every((m) => m === follower)
        ? `every client given all three servers; each session on follower ${follower}`
        : `every client given all three servers; sessions: ${describeSpread(ensemble, placed)}`;
    } else {
      const started = await Promise.all(impls.map(async (impl) => [impl, await connectedWorker(ctx, target, impl)] as const));
      for (const [impl, worker] of started) workers.set(impl, worker);
    }

    ctx.log(`${id}: warm-up, ${settings.warmup} cycles each`);
    for (const impl of impls) await workers.get(impl)!.ask<UncontendedAnswer>({ name: 'uncontended', path: path(impl), cycles: settings.warmup });

    const rounds = new Map<Impl, RoundFigures[]>(impls.map((impl) => [impl, []]));
    const blockCycles = Math.ceil(settings.cycles / settings.blocks);
    for (let round = 0; round < settings.rounds; round++) {
      ctx.log(`${id}: round ${round + 1}/${settings.rounds}`);
      const tallies = new Map(impls.map((impl) => [impl, new RoundTally()]));
      for (let block = 0; block < settings.blocks; block++) {
        for (const impl of rotate(impls, round * settings.blocks + block)) {
          const worker = workers.get(impl)!;
          await worker.ask({ name: 'uncontended', path: path(impl), cycles: settings.rewarm });
          const before = await target.counters();
          const answer = await worker.ask<UncontendedAnswer>({ name: 'uncontended', path: path(impl), cycles: blockCycles });
          const delta = diffCounters(before, await target.counters());
          tallies.get(impl)!.add(answer, delta.requests, delta.proposals, delta.serverCpuMs);
        }
      }
      for (const impl of impls) rounds.get(impl)!.push(tallies.get(impl)!.figures());
    }
    return summarise(id, target, placement, impls, rounds, settings, options, ctx);
  } finally {
    await stopWorkers(workers.values());
  }
}

function summarise(
  id: string,
  target: BenchTarget,
  placement: string | undefined,
  impls: Impl[],
  rounds: Map<Impl, RoundFigures[]>,
  settings: Settings,
  options: UncontendedOptions,
  ctx: BenchContext,
): WorkloadResult {
  const storage = target.storage;
  const ensemble = target.kind === 'ensemble';
  const maxP50 = options.maxP50VsFloor ?? 1.1;
  const of = (impl: Impl, key: keyof RoundFigures): Figure => figure(rounds.get(impl)!.map((r) => r[key]));
  /** Per-round ratio subject/baseline of one metric, summarised over the rounds. */
  const ratio = (subject: Impl, baseline: Impl, key: keyof RoundFigures): Figure | undefined => {
    const base = rounds.get(baseline);
    if (!base) return undefined;
    return figure(rounds.get(subject)!.map((r, i) => r[key] / base[i]![key]));
  };
  const hasCurator = impls.includes('curator');
  const rows = impls.map((impl) => ({
    subject: LABELS[impl],
    cells: {
      p50: of(impl, 'p50Us'),
      p99: of(impl, 'p99Us'),
      rate: of(impl, 'cyclesPerSec'),
      cpu: of(impl, 'cpuUsPerCycle'),
      requests: of(impl, 'requestsPerCycle'),
      txns: ensemble ? of(impl, 'txnsPerCycle') : undefined,
      serverCpu: ensemble ? of(impl, 'serverCpuUsPerCycle') : undefined,
      p50VsFloor: ratio(impl, 'raw-pipelined', 'p50Us'),
      rateVsCurator: hasCurator ? ratio(impl, 'curator', 'cyclesPerSec') : undefined,
    },
  }));

  const checks: Check[] = [];
  for (const ours of (['lockservice', 'fairlock'] as const).filter((impl) => impls.includes(impl))) {
    const name = LABELS[ours].replace('ours: ', '').replace(' acquire+release', '');
    const p50Ratio = ratio(ours, 'raw-pipelined', 'p50Us')!.median;
    checks.push({
      target: `${name}: p50 within ${Math.round((maxP50 - 1) * 100)}% of the raw-client floor (<= ${maxP50.toFixed(2)}x)`,
      measured: `${formatNumber(p50Ratio, 2)}x (${formatNumber(of(ours, 'p50Us').median, 0)} µs vs ${formatNumber(of('raw-pipelined', 'p50Us').median, 0)} µs)`,
      met: p50Ratio <= maxP50,
    });
    const requests = of(ours, 'requestsPerCycle').median;
    checks.push({
      target: `${name}: 3 server requests per cycle (create, list, delete)`,
      measured: formatNumber(requests, 2),
      met: Number(requests.toFixed(2)) <= 3,
    });
    const rateRatio = hasCurator ? ratio(ours, 'curator', 'cyclesPerSec')!.median : Number.NaN;
    checks.push({
      target: `${name}: cycles/s at least Curator's (>= 1.00x)`,
      measured: hasCurator
        ? `${formatNumber(rateRatio, 2)}x (${formatNumber(of(ours, 'cyclesPerSec').median)} vs ${formatNumber(of('curator', 'cyclesPerSec').median)} cycles/s)`
        : `no Curator in this run (${ctx.curatorMissing})`,
      met: hasCurator ? rateRatio >= 1 : undefined,
    });
    if (ensemble) {
      const txns = of(ours, 'txnsPerCycle').median;
      const floor = of('raw-pipelined', 'txnsPerCycle').median;
      checks.push({
        target: `${name}: write transactions per cycle no more than the floor's (the leader's proposals)`,
        measured: `${formatNumber(txns, 2)} vs ${formatNumber(floor, 2)}${hasCurator ? ` (Curator ${formatNumber(of('curator', 'txnsPerCycle').median, 2)})` : ''}`,
        met: Number(txns.toFixed(2)) <= Number(floor.toFixed(2)),
      });
    }
  }
  const slower: string[] = [];
  for (const ours of (['fairlock', 'lockservice'] as const).filter((impl) => impls.includes(impl))) {
    const vsCurator = hasCurator ? ratio(ours, 'curator', 'cyclesPerSec')!.median : Number.NaN;
    if (vsCurator < 1) slower.push(`SLOWER than Curator: ${LABELS[ours]} runs ${formatNumber(vsCurator, 2)}x Curator's cycles/s.`);
    const vsPromise = ratio(ours, 'raw-promise', 'p50Us')?.median ?? Number.NaN;
    if (vsPromise > 1.1) slower.push(`${LABELS[ours]}: p50 ${formatNumber(vsPromise, 2)}x the raw client behind promises.`);
  }
  return {
    id,
    title: ensemble
      ? `Uncontended acquire + release, one session, 3-node ensemble (data on ${storage}, fsync on; ${placement})`
      : `Uncontended acquire + release, one session (ZooKeeper data on ${storage})`,
    columns: [
      { key: 'p50', label: 'p50 µs', digits: 0 },
      { key: 'p99', label: 'p99 µs', digits: 0 },
      { key: 'rate', label: 'cycles/s', digits: 0 },
      { key: 'cpu', label: 'client CPU µs/cycle', digits: 0 },
      { key: 'requests', label: 'requests/cycle', digits: 2 },
      ...(ensemble ? ENSEMBLE_COLUMNS : []),
      { key: 'p50VsFloor', label: 'p50 vs floor', digits: 2, ratio: true },
      { key: 'rateVsCurator', label: 'cycles/s vs Curator', digits: 2, ratio: true },
    ],
    rows,
    checks,
    notes: [
      ...slower,
      ...(ensemble
        ? [
            "write txns: the leader's zk_proposal_count over the cycles run (requests are summed over the three members); server CPU: the three server JVMs' user + system time (10 ms ticks).",
          ]
        : []),
      'client CPU: CPU time of the whole client process per cycle, all threads (for the JVM also its JIT and GC), less sensitive than latency to what else the machine runs.',
      `${settings.rounds} rounds of ${settings.cycles} cycles per implementation, each round in ${settings.blocks} blocks that the implementations take in turn, after ${settings.warmup} warm-up cycles (and ${settings.rewarm} unmeasured ones before each block); ± is half the range of the rounds.`,
    ],
    details: { storage, placement, settings, rounds: Object.fromEntries(rounds) },
  };
}

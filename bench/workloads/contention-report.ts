/**
 * The table of a contention workload (contention.ts): a row per implementation, each figure the
 * median of the rounds, the targets checked against Curator, and notes on where the sessions sat
 * and, on an ensemble, which write transactions the leader logged.
 */
import type { BenchContext, Impl } from '../support/context.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, type Figure } from '../support/stats.js';
import { type BenchTarget, ENSEMBLE_COLUMNS } from '../support/target.js';
import type { ContentionSettings } from './contention.js';

export type Variant = Impl | 'curator-own';

const LABELS: Partial<Record<Variant, string>> = {
  curator: 'Curator InterProcessMutex',
  'curator-own': 'Curator, one InterProcessMutex per thread',
  lockservice: 'ours: LockService',
  'lockservice-solo': 'ours: LockService, cohort: false',
  fairlock: 'ours: FairLock (fair queue)',
  simplelock: 'ours: SimpleLock (one node, unfair)',
};

export interface RoundFigures {
  rate: number;
  waitP50Ms: number;
  waitP99Ms: number;
  requestsPerCycle: number;
  notificationsPerCycle: number;
  /** Write transactions (the leader's proposals) per cycle; ensembles only. */
  txnsPerCycle: number;
  /** CPU time of the three servers per cycle, µs; ensembles only. */
  serverCpuUsPerCycle: number;
  /** Fewest cycles one session completed over most: 1 is perfectly even. */
  evenness: number;
  /** The fewest and the most cycles one session completed in the round. */
  fewest: number;
  most: number;
}

export function summarise(
  ctx: BenchContext,
  s: ContentionSettings,
  target: BenchTarget,
  impls: Variant[],
  rounds: Map<Variant, RoundFigures[]>,
  spreads: Map<Variant, string>,
  zxids: Map<Variant, [string, string][]>,
  txnTypes: Map<Variant, Record<string, number>>,
): WorkloadResult {
  const ensemble = target.kind === 'ensemble';
  const curators = impls.filter((i) => i === 'curator' || i === 'curator-own');
  const of = (impl: Variant, key: keyof RoundFigures): Figure => figure(rounds.get(impl)!.map((r) => r[key]));
  const hasCurator = impls.includes('curator');
  const vsCurator = (impl: Variant): Figure | undefined =>
    hasCurator ? figure(rounds.get(impl)!.map((r, i) => r.rate / rounds.get('curator')![i]!.rate)) : undefined;
  const rateRatio = vsCurator('lockservice');
  const rows = impls.map((impl) => ({
    subject: s.readPercent === undefined ? LABELS[impl]! : impl === 'curator' ? 'Curator InterProcessReadWriteLock' : `${LABELS[impl]!} (read/write modes)`,
    cells: {
      rate: of(impl, 'rate'),
      p50: of(impl, 'waitP50Ms'),
      p99: of(impl, 'waitP99Ms'),
      requests: of(impl, 'requestsPerCycle'),
      notifications: of(impl, 'notificationsPerCycle'),
      txns: ensemble ? of(impl, 'txnsPerCycle') : undefined,
      serverCpu: ensemble ? of(impl, 'serverCpuUsPerCycle') : undefined,
      evenness: s.processes > 1 ? of(impl, 'evenness') : undefined,
      fewest: s.grantsPerSession ? of(impl, 'fewest') : undefined,
      most: s.grantsPerSession ? of(impl, 'most') : undefined,
      vsCurator: vsCurator(impl),
      vsCuratorOwn: impls.includes('curator-own') ? figure(rounds.get(impl)!.map((r, i) => r.rate / rounds.get('curator-own')![i]!.rate)) : undefined,
    },
  }));
  const checks: Check[] = [];
  if (s.minRateVsCurator !== undefined) {
    checks.push({
      target: `handoff rate at least ${s.minRateVsCurator.toFixed(2)}x Curator's`,
      measured: rateRatio
        ? `${formatNumber(rateRatio.median, 2)}x (${formatNumber(of('lockservice', 'rate').median)} vs ${formatNumber(of('curator', 'rate').median)} cycles/s)`
        : `no Curator in this run (${ctx.curatorMissing})`,
      met: rateRatio ? rateRatio.median >= s.minRateVsCurator : undefined,
    });
  }
  if (s.maxRequestsPerCycle !== undefined) {
    const requests = of('lockservice', 'requestsPerCycle').median;
    checks.push({
      target: `at most ${s.maxRequestsPerCycle} server requests per cycle`,
      measured: formatNumber(requests, 2),
      met: Number(requests.toFixed(2)) <= s.maxRequestsPerCycle,
    });
  }
  if (s.maxTxnsVsCurator) {
    const ours = of('lockservice', 'txnsPerCycle').median;
    const theirs = hasCurator ? of('curator', 'txnsPerCycle').median : Number.NaN;
    checks.push({
      target: "write transactions per handoff no more than Curator's (the leader's proposals)",
      measured: hasCurator ? `${formatNumber(ours, 2)} vs ${formatNumber(theirs, 2)}` : `no Curator in this run (${ctx.curatorMissing})`,
      met: hasCurator ? Number(ours.toFixed(2)) <= Number(theirs.toFixed(2)) : undefined,
    });
  }
  const slower: string[] = [];
  for (const base of curators) {
    const r = figure(rounds.get('lockservice')!.map((x, i) => x.rate / rounds.get(base)![i]!.rate)).median;
    if (r < 1) slower.push(`SLOWER than ${LABELS[base]}: ours runs ${formatNumber(r, 2)}x its cycles/s.`);
  }
  return {
    id: s.id,
    title: s.title,
    columns: [
      { key: 'rate', label: 'cycles/s', digits: 0 },
      { key: 'p50', label: 'wait p50 ms', digits: 2 },
      { key: 'p99', label: 'wait p99 ms', digits: 2 },
      { key: 'requests', label: 'requests/cycle', digits: 2 },
      { key: 'notifications', label: 'notifications/cycle', digits: 2 },
      ...(ensemble ? ENSEMBLE_COLUMNS : []),
      ...(s.grantsPerSession
        ? [
            { key: 'fewest', label: 'fewest per session', digits: 0 },
            { key: 'most', label: 'most per session', digits: 0 },
          ]
        : []),
      ...(s.processes > 1 ? [{ key: 'evenness', label: s.grantsPerSession ? 'fewest/most' : 'fewest/most per process', digits: 2 }] : []),
      { key: 'vsCurator', label: 'cycles/s vs Curator', digits: 2, ratio: true },
      ...(impls.includes('curator-own') ? [{ key: 'vsCuratorOwn', label: 'vs Curator, mutex per thread', digits: 2, ratio: true }] : []),
    ],
    rows,
    checks,
    notes: [
      ...slower,
      ...(ensemble
        ? [
            `3-node ensemble on loopback, data and transaction log on ${target.storage}, fsync on; every client given all three servers; sessions ${ctx.quick ? 'where they landed (--quick)' : 'placed evenly'}: ${[...new Set(spreads.values())].join(' / ')}.`,
            ...[...txnTypes].map(
              ([impl, types]) =>
                `write txns per cycle by type (the leader's log), ${LABELS[impl]}: ${Object.entries(types)
                  .sort((a, b) => b[1] - a[1])
                  .map(([type, n]) => `${type} ${formatNumber(n, 3)}`)
                  .join(', ')}.`,
            ),
            "write txns: the leader's zk_proposal_count over every cycle run in the windows (requests and notifications are summed over the three members); server CPU: the three server JVMs' user + system time (10 ms ticks).",
          ]
        : []),
      ...(s.curatorSessionsPerJvm && impls.includes('curator')
        ? [`Curator: ${s.processes} sessions as ${s.curatorSessionsPerJvm} threads (a session and a mutex each) in each of ${s.processes / s.curatorSessionsPerJvm} JVMs.`]
        : []),
      `${s.processes} process(es) x ${s.callersPerProcess} caller(s) per implementation; ${s.rounds} rounds of ${s.durationMs / 1000} s each${(s.blocks ?? 1) > 1 ? `, in ${s.blocks} windows that the implementations take in turn` : ''}, after ${s.warmupCycles} uncontended cycles per process and a ${s.warmupMs / 1000} s contended warm-up; ± is half the range of the rounds.`,
    ],
    details: {
      settings: { ...s, target: undefined },
      storage: target.storage,
      spreads: Object.fromEntries(spreads),
      ...(ensemble ? { leaderZxidWindows: Object.fromEntries(zxids), txnTypesPerCycle: Object.fromEntries(txnTypes) } : {}),
      rounds: Object.fromEntries(rounds),
    },
  };
}

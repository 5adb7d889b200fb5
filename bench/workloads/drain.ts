/**
 * `ensemble-drain`: a holder keeps one lock while W waiters queue for it, spread over P processes
 * (W/P callers each, all asking at once), on the 3-node ensemble; then the holder lets go and the
 * queue drains, every waiter taking the lock once and releasing it at once. Reported while it
 * drains: the handoff time (from one holder's release call to the next one's grant, p50 and p99),
 * the drain rate, and per handoff the watch notifications the servers sent (the wake-ups: a queue
 * that wakes only the next waiter sends one), the requests and the write transactions.
 *
 * Handoffs are measured across processes on one clock: each grant and release instant is read from
 * CLOCK_MONOTONIC (Node's process.hrtime, Java's System.nanoTime), the same for every process on the
 * machine. Sorted by grant, the instants also prove exclusion: no grant before the previous
 * holder's release call (the workload fails otherwise).
 */
import { type BenchContext, type Impl, stopWorkers } from '../support/context.js';
import { diffCounters } from '../support/mntr.js';
import type { DrainAnswer, ReleaseAllAnswer } from '../support/protocol.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, percentile } from '../support/stats.js';
import { describeSpread, type EnsembleTarget, evenQuota, placedWorkers } from '../support/target.js';
import type { LineWorker } from '../support/children.js';

export interface DrainSettings {
  processes: number;
  waitersPerProcess: number;
  /** Measured drains per implementation, after one unmeasured (warm-up) drain. */
  rounds: number;
}

const LABELS: Partial<Record<Impl, string>> = {
  curator: 'Curator InterProcessMutex (a mutex per thread)',
  'lockservice-solo': 'ours: LockService, cohort: false',
  lockservice: 'ours: LockService (cohort queue)',
};

interface DrainFigures {
  rate: number;
  handoffP50Ms: number;
  handoffP99Ms: number;
  notificationsPerHandoff: number;
  requestsPerHandoff: number;
  txnsPerHandoff: number;
  drainS: number;
}

export async function runDrain(ctx: BenchContext, s: DrainSettings): Promise<WorkloadResult> {
  const target = await ctx.ensemble();
  const impls: Impl[] = [...(ctx.curator ? (['curator'] as const) : []), 'lockservice-solo', 'lockservice'];
  const root = `/bench-drain-${Date.now().toString(36)}`;
  const waiters = s.processes * s.waitersPerProcess;
  const rounds = new Map<Impl, DrainFigures[]>(impls.map((impl) => [impl, []]));
  const spreads = new Map<Impl, string>();
  for (const impl of impls) {
    ctx.log(`ensemble-drain: ${impl}, ${waiters} waiters in ${s.processes} processes`);
    const labels = Array.from({ length: s.processes }, (_, i) => `drain-${impl}-${i + 1}`);
    const placed = await placedWorkers(ctx, target, impl, labels, evenQuota(target, s.processes));
    const holder = await placedWorkers(ctx, target, impl, [`drain-${impl}-holder`], evenQuota(target, 1)).catch(async (error: unknown) => {
      await stopWorkers(placed.workers);
      throw error;
    });
    spreads.set(impl, `waiters ${describeSpread(target, placed.members)}; holder ${describeSpread(target, holder.members)}`);
    const all = [...placed.workers, ...holder.workers];
    try {
      await Promise.all(all.map((w, i) => w.ask({ name: 'uncontended', path: `${root}/warm/${impl}-${i}`, cycles: ctx.quick ? 50 : 1000 })));
      for (let round = 0; round <= s.rounds; round++) {
        const figures = await drainOnce(target, placed.workers, holder.workers[0]!, `${root}/${impl}/r${round}`, s, impl);
        if (round > 0 || s.rounds === 0) rounds.get(impl)!.push(figures); // round 0 warms up
      }
    } finally {
      await stopWorkers(all);
    }
  }
  return summarise(ctx, s, target, impls, rounds, spreads);
}

async function drainOnce(target: EnsembleTarget, workers: LineWorker[], holder: LineWorker, path: string, s: DrainSettings, impl: Impl): Promise<DrainFigures> {
  const waiters = s.processes * s.waitersPerProcess;
  await holder.ask({ name: 'hold', path, count: 1 });
  const base = await target.counters();
  const drains = workers.map((w) => w.ask<DrainAnswer>({ name: 'drain', path, callers: s.waitersPerProcess }, 600_000));
  drains.forEach((d) => d.catch(() => undefined)); // awaited below
  // Queued: every waiter watches its predecessor; with the cohort queue only each process's first
  // caller has a node (and a watch), the others wait in their process.
  const expected = impl === 'lockservice' ? s.processes : waiters;
  for (const deadline = Date.now() + 120_000; (await target.counters()).watches - base.watches < expected; ) {
    if (Date.now() > deadline) throw new Error(`${impl}: ${waiters} waiters did not queue within 120 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 300));
  const before = await target.counters();
  const released = await holder.ask<ReleaseAllAnswer>({ name: 'releaseAll' });
  const answers = await Promise.all(drains);
  const delta = diffCounters(before, await target.counters());
  const grants = answers.flatMap((a) => a.grantsUs.map((grant, i) => ({ grant, release: a.releasesUs[i]! }))).sort((a, b) => a.grant - b.grant);
  const handoffsMs: number[] = [];
  let previousRelease = released.releaseStartUs;
  for (const g of grants) {
    const gap = g.grant - previousRelease;
    if (gap < 0) throw new Error(`${impl}: a grant ${(-gap).toFixed(1)} µs before the previous holder's release: two holders at once`);
    handoffsMs.push(gap / 1000);
    previousRelease = g.release;
  }
  const drainS = (grants.at(-1)!.grant - released.releaseStartUs) / 1e6;
  return {
    rate: waiters / drainS,
    handoffP50Ms: percentile(handoffsMs, 50),
    handoffP99Ms: percentile(handoffsMs, 99),
    notificationsPerHandoff: delta.notifications / waiters,
    requestsPerHandoff: delta.requests / waiters,
    txnsPerHandoff: delta.proposals / waiters,
    drainS,
  };
}

function summarise(
  ctx: BenchContext,
  s: DrainSettings,
  target: EnsembleTarget,
  impls: Impl[],
  rounds: Map<Impl, DrainFigures[]>,
  spreads: Map<Impl, string>,
): WorkloadResult {
  const of = (impl: Impl, key: keyof DrainFigures) => figure(rounds.get(impl)!.map((r) => r[key]));
  const waiters = s.processes * s.waitersPerProcess;
  const checks: Check[] = (['lockservice-solo', 'lockservice'] as const).map((impl) => {
    const worst = Math.max(...rounds.get(impl)!.map((r) => r.notificationsPerHandoff));
    return {
      target: `${LABELS[impl]}: at most 1 wake-up (watch notification) per handoff while ${formatNumber(waiters)} waiters drain`,
      measured: `${formatNumber(worst, 2)} in the worst round`,
      met: Number(worst.toFixed(2)) <= 1,
    };
  });
  return {
    id: 'ensemble-drain',
    title: `${formatNumber(waiters)} waiters on one lock in ${s.processes} processes (${s.waitersPerProcess} each) draining, 3-node ensemble (data on disk, fsync on)`,
    columns: [
      { key: 'rate', label: 'handoffs/s', digits: 0 },
      { key: 'p50', label: 'handoff p50 ms', digits: 3 },
      { key: 'p99', label: 'handoff p99 ms', digits: 3 },
      { key: 'notifications', label: 'wake-ups/handoff', digits: 2 },
      { key: 'requests', label: 'requests/handoff', digits: 2 },
      { key: 'txns', label: 'write txns/handoff', digits: 2 },
      { key: 'drain', label: 'drain (s)', digits: 2 },
    ],
    rows: impls.map((impl) => ({
      subject: LABELS[impl]!,
      cells: {
        rate: of(impl, 'rate'),
        p50: of(impl, 'handoffP50Ms'),
        p99: of(impl, 'handoffP99Ms'),
        notifications: of(impl, 'notificationsPerHandoff'),
        requests: of(impl, 'requestsPerHandoff'),
        txns: of(impl, 'txnsPerHandoff'),
        drain: of(impl, 'drainS'),
      },
    })),
    checks,
    notes: [
      `${s.rounds} measured drain(s) per implementation after one unmeasured; a holder in a process of its own keeps the lock until all ${formatNumber(waiters)} have queued, then releases; each waiter takes the lock once and releases it at once. Sessions ${ctx.quick ? 'where they landed (--quick)' : 'placed evenly'}: ${[...new Set(spreads.values())].join(' / ')}.`,
      'handoff: from one holder\'s release call to the next holder\'s grant (one monotonic clock for every process); wake-ups: the watch notifications the servers sent (zk_sum_node_*_watch_count, summed over the members), per handoff; write txns: the leader\'s zk_proposal_count.',
      'With the cohort queue, each process\'s callers share one node: a local handoff needs no request, no write and no notification, and a process passes the lock on to the next after 16 local handoffs or 50 ms (the defaults), so wake-ups per handoff fall well below 1.',
      ...(ctx.curator ? [] : [`no Curator in this run (${ctx.curatorMissing})`]),
    ],
    details: { settings: s, leaderId: target.leaderId, spreads: Object.fromEntries(spreads), rounds: Object.fromEntries(rounds) },
  };
}

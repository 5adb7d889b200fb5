/**
 * Many callers contending on one lock, each looping acquire + release with nothing done while
 * holding it: the rate is the lock's handoff rate. Used twice:
 * - `sessions`: 8 client sessions in 8 separate processes, one caller each (ours: 8 Node processes
 *   with LockService; Curator: 8 JVMs with InterProcessMutex);
 * - `callers`: 64 concurrent callers in one process on one session (ours: 64 async loops on one
 *   LockService; Curator: 64 threads on one CuratorFramework sharing one InterProcessMutex).
 * All processes start their window at the same wall-clock instant; the rate is the cycles completed
 * inside the window over its length; waits are acquire latencies; requests per cycle counts every
 * request the server served between two mntr readings over every cycle run in between.
 */
import type { LineWorker } from '../support/children.js';
import { type BenchContext, connectedWorker, connectedWorkerSession, type Impl, rotate, stopWorkers } from '../support/context.js';
import { type Counters, diffCounters } from '../support/mntr.js';
import type { ContendAnswer, UncontendedAnswer } from '../support/protocol.js';
import type { WorkloadResult } from '../support/report.js';
import { percentile } from '../support/stats.js';
import { countTxnTypes } from '../support/txnlog.js';
import { type RoundFigures, summarise, type Variant } from './contention-report.js';
import { type BenchTarget, describeSpread, type EnsembleTarget, evenQuota, memberOfSession, placedWorkers, standaloneTarget } from '../support/target.js';

/**
 * The contended warm-up, ms, of every workload that runs Curator: its JVMs keep getting faster for
 * about 15 s of contention (C2 compiling the contended path), and a 2 s warm-up had flattered our
 * ratios by up to 1.8x in the first rounds.
 */
export const CURATOR_WARMUP_MS = 15_000;

/**
 * The 8-session workload's, ms, where the target is: with 8 JVMs sharing 2 cores, Curator's rate
 * was still rising after 15 s (round by round, 727 to 900 handoffs/s) and after 90 s too (738 to
 * 1,347), while ours was flat; a minute is what a run can afford.
 */
export const SESSIONS_WARMUP_MS = 60_000;

/**
 * The ensemble workloads' contended warm-up, ms: each handoff there waits on quorum commits and
 * fsyncs, so the clients' CPU (and Curator's JIT) matter less than on tmpfs; 20 s of contention
 * still compiles Curator's contended path.
 */
export const ENSEMBLE_WARMUP_MS = 20_000;

export interface ContentionSettings {
  id: string;
  title: string;
  processes: number;
  callersPerProcess: number;
  /** Uncontended cycles each process runs first, on a lock of its own (JIT warm-up). */
  warmupCycles: number;
  /** One contended window, not measured, after the uncontended warm-up. */
  warmupMs: number;
  /** Measured time per implementation and round, ms... */
  durationMs: number;
  /** ...in this many windows, which the implementations take in turn (default 1). */
  blocks?: number;
  rounds: number;
  /** Also run Curator with one InterProcessMutex per caller thread (its shared mutex wakes every thread on each change). */
  curatorOwnMutexes?: boolean;
  /** Our implementations to run (default: LockService); Curator runs beside them when available, unless `noCurator`. */
  ours?: Impl[];
  noCurator?: boolean;
  /** The read/write lock with this share of reads, instead of the exclusive lock. */
  readPercent?: number;
  /** Time each operation holds its lock, ms. */
  holdMs?: number;
  /** Targets against Curator, if any. */
  minRateVsCurator?: number;
  maxRequestsPerCycle?: number;
  /** Target on an ensemble: ours no more write transactions per cycle than Curator. */
  maxTxnsVsCurator?: boolean;
  /** Where to run (default: the main standalone server). */
  target?: BenchTarget;
  /**
   * Curator hosts this many sessions per JVM, a caller thread and a mutex each (`processes` sessions
   * in processes / k JVMs), where a JVM per session is too heavy for the machine; needs
   * callersPerProcess 1.
   */
  curatorSessionsPerJvm?: number;
  /** Also report the fewest and the most cycles any one session completed in a round. */
  grantsPerSession?: boolean;
}

export async function runContention(ctx: BenchContext, s: ContentionSettings): Promise<WorkloadResult> {
  const curators: Variant[] = ctx.curator && !s.noCurator ? (s.curatorOwnMutexes ? ['curator', 'curator-own'] : ['curator']) : [];
  const impls: Variant[] = [...curators, ...(s.ours ?? ['lockservice'])];
  const groups = new Map<Variant, LineWorker[]>();
  const target = s.target ?? standaloneTarget(ctx.server, ctx.serverStorage);
  const spreads = new Map<Variant, string>();
  const zxids = new Map<Variant, [string, string][]>(impls.map((impl) => [impl, []]));
  const cyclesRun = new Map<Variant, number>(impls.map((impl) => [impl, 0]));
  const lockPath = (impl: Variant): string => `/bench-${s.id}/${impl}`;
  const mutexes = (impl: Variant): 'own' | undefined => (impl === 'curator-own' ? 'own' : undefined);
  // A Curator JVM hosting several sessions runs a caller thread per session.
  const callersOf = (impl: Variant): number => (impl === 'curator' && s.curatorSessionsPerJvm ? s.curatorSessionsPerJvm : s.callersPerProcess);
  try {
    ctx.log(`${s.id}: starting ${s.processes} process(es) per implementation`);
    for (const impl of impls) {
      const { workers, spread } = await startGroup(ctx, s, target, impl);
      groups.set(impl, workers);
      if (spread) spreads.set(impl, spread);
    }
    ctx.log(`${s.id}: warm-up`);
    for (const impl of impls) {
      const workers = groups.get(impl)!;
      await Promise.all(
        workers.map((w, i) => w.ask<UncontendedAnswer>({ name: 'uncontended', path: `/bench-${s.id}-warm/${impl}-${i}`, cycles: s.warmupCycles })),
      );
      await window(workers, lockPath(impl), callersOf(impl), s.warmupMs, mutexes(impl), s);
    }
    const rounds = new Map<Variant, RoundFigures[]>(impls.map((impl) => [impl, []]));
    const blocks = s.blocks ?? 1;
    for (let round = 0; round < s.rounds; round++) {
      ctx.log(`${s.id}: round ${round + 1}/${s.rounds}`);
      const tallies = new Map(impls.map((impl) => [impl, new WindowTally()]));
      for (let block = 0; block < blocks; block++) {
        for (const impl of rotate(impls, round * blocks + block)) {
          const zxidBefore = target.kind === 'ensemble' ? await (target as EnsembleTarget).zxid() : undefined;
          const before = await target.counters();
          const answers = await window(groups.get(impl)!, lockPath(impl), callersOf(impl), s.durationMs / blocks, mutexes(impl), s);
          const after = await target.counters();
          if (zxidBefore) zxids.get(impl)!.push([zxidBefore, await (target as EnsembleTarget).zxid()]);
          tallies.get(impl)!.add(answers, diffCounters(before, after));
          cyclesRun.set(impl, cyclesRun.get(impl)! + answers.reduce((sum, a) => sum + a.allCycles, 0));
        }
      }
      for (const impl of impls) rounds.get(impl)!.push(tallies.get(impl)!.figures(s.durationMs));
    }
    const txnTypes = new Map<Variant, Record<string, number>>();
    if (target.kind === 'ensemble') {
      // Which transactions: the leader's log, by type, per cycle run in the windows.
      const ensemble = target as EnsembleTarget;
      const leader = ensemble.ensemble.servers.find((m) => m.id === ensemble.leaderId)!;
      const t0 = Date.now();
      const counted = countTxnTypes(leader.dataDir, zxids);
      ctx.log(`${s.id}: write transactions by type from the leader's log (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      if ('error' in counted) ctx.log(`${s.id}: no transaction breakdown: ${counted.error}`);
      else {
        for (const [impl, counts] of counted) {
          txnTypes.set(impl, Object.fromEntries(Object.entries(counts).map(([type, n]) => [type, n / cyclesRun.get(impl)!])));
        }
      }
    }
    return summarise(ctx, s, target, impls, rounds, spreads, zxids, txnTypes);
  } finally {
    await stopWorkers([...groups.values()].flat());
  }
}

/**
 * Starts an implementation's workers (connected, placed on the ensemble's members as the workload
 * wants) and says where their sessions sit. A Curator JVM with several sessions gets, on an
 * ensemble, each session's member as its only host (the Java client picks a host at random, and a
 * JVM cannot be restarted per session): the same spread as the others get by restarts.
 */
async function startGroup(ctx: BenchContext, s: ContentionSettings, target: BenchTarget, impl: Variant): Promise<{ workers: LineWorker[]; spread?: string }> {
  const kind = impl === 'curator-own' ? 'curator' : impl;
  const perJvm = impl === 'curator' ? (s.curatorSessionsPerJvm ?? 1) : 1;
  const labels = Array.from({ length: s.processes / perJvm }, (_, i) => `${impl}-${s.id}-${i + 1}`);
  if (perJvm > 1) {
    const ensemble = target.kind === 'ensemble' ? (target as EnsembleTarget) : undefined;
    const hostOf = (member: number): string => ensemble!.ensemble.servers.find((m) => m.id === member)!.connectString;
    const connectOf = (session: number): string =>
      ensemble && !ctx.quick ? hostOf(ensemble.members[session % ensemble.members.length]!) : target.connectString;
    const started = await Promise.allSettled(
      labels.map((label, jvm) =>
        connectedWorkerSession(ctx, Array.from({ length: perJvm }, (_, j) => connectOf(jvm * perJvm + j)).join('|'), kind, label),
      ),
    );
    const workers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value.worker] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await stopWorkers(workers);
      throw failed.reason;
    }
    const members = started.flatMap((r) => (r.status === 'fulfilled' ? r.value.sessionIds.map(memberOfSession) : []));
    return { workers, spread: ensemble ? describeSpread(ensemble, members) : undefined };
  }
  if (target.kind === 'ensemble') {
    // The sessions spread evenly over the members (followers first), the same for every implementation.
    const ensemble = target as EnsembleTarget;
    const { workers, members } = await placedWorkers(ctx, ensemble, kind, labels, evenQuota(ensemble, s.processes));
    return { workers, spread: describeSpread(ensemble, members) };
  }
  return { workers: await Promise.all(labels.map((label) => connectedWorker(ctx, target, kind, label))) };
}

/** One implementation's windows of a round, summed. */
class WindowTally {
  private counted = 0;
  private all = 0;
  private readonly waitsNs: number[] = [];
  private requests = 0;
  private notifications = 0;
  private proposals = 0;
  private serverCpuMs = 0;
  /** Counted cycles per session (a worker's sessions in order, the workers in order). */
  private readonly perSession: number[] = [];

  add(answers: ContendAnswer[], delta: Counters): void {
    answers
      .flatMap((answer) => answer.perSession ?? [answer.cycles])
      .forEach((cycles, i) => {
        this.perSession[i] = (this.perSession[i] ?? 0) + cycles;
      });
    for (const answer of answers) {
      this.counted += answer.cycles;
      this.all += answer.allCycles;
      for (const wait of answer.waitsNs) this.waitsNs.push(wait);
    }
    this.requests += delta.requests;
    this.notifications += delta.notifications;
    this.proposals += delta.proposals;
    this.serverCpuMs += delta.serverCpuMs;
  }

  figures(durationMs: number): RoundFigures {
    return {
      rate: this.counted / (durationMs / 1000),
      waitP50Ms: percentile(this.waitsNs, 50) / 1e6,
      waitP99Ms: percentile(this.waitsNs, 99) / 1e6,
      requestsPerCycle: this.requests / this.all,
      notificationsPerCycle: this.notifications / this.all,
      txnsPerCycle: this.proposals / this.all,
      serverCpuUsPerCycle: (this.serverCpuMs * 1000) / this.all,
      evenness: Math.min(...this.perSession) / Math.max(...this.perSession),
      fewest: Math.min(...this.perSession),
      most: Math.max(...this.perSession),
    };
  }
}

/** Every worker runs the same window, starting at the same wall-clock instant. */
function window(
  workers: LineWorker[],
  path: string,
  callers: number,
  durationMs: number,
  mutexes: 'own' | undefined,
  { readPercent, holdMs }: Pick<ContentionSettings, 'readPercent' | 'holdMs'>,
): Promise<ContendAnswer[]> {
  const startAt = Date.now() + 300;
  return Promise.all(
    workers.map((w) => w.ask<ContendAnswer>({ name: 'contend', path, callers, startAt, durationMs, mutexes, readPercent, holdMs }, durationMs + 120_000)),
  );
}

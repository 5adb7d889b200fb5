/** Every workload, in the order a full run runs them. `--only` picks by id. */
import type { BenchContext } from '../support/context.js';
import type { WorkloadResult } from '../support/report.js';
import { type ContentionSettings, CURATOR_WARMUP_MS, ENSEMBLE_WARMUP_MS, runContention, SESSIONS_WARMUP_MS } from './contention.js';
import { runHeap } from './heap.js';
import { runHerd } from './herd.js';
import { runDrain } from './drain.js';
import { runHttp } from './http.js';
import { runManyLocks } from './many-locks.js';
import { readWriteWorkload } from './read-write.js';
import { simpleLockWorkload } from './simple-lock.js';
import { standaloneTarget } from '../support/target.js';
import { runUncontended } from './uncontended.js';
import { runWrites } from './writes.js';

export interface Workload {
  id: string;
  description: string;
  /** Why it cannot run yet (a recipe still missing from lib/); pending workloads are listed, not run. */
  pending?: string;
  run(ctx: BenchContext): Promise<WorkloadResult>;
}

/**
 * What every contention workload on the ensemble shares: the ensemble itself, LockService with and
 * without the cohort queue, the title's description of the ensemble, the timings, and the target of
 * no more write transactions per handoff than Curator. `full` is the measured windows of a full run.
 */
async function onEnsemble(
  ctx: BenchContext,
  id: string,
  who: string,
  processes: number,
  callersPerProcess: number,
  full: { blocks?: number; rounds: number },
): Promise<ContentionSettings> {
  return {
    id,
    title: `${who} on one lock, 3-node ensemble (data on disk, fsync on; clients given all three servers${ctx.quick ? '' : ', sessions spread evenly'})`,
    target: await ctx.ensemble(),
    processes,
    callersPerProcess,
    ours: ['lockservice', 'lockservice-solo'],
    ...(ctx.quick
      ? { warmupCycles: 50, warmupMs: 300, durationMs: 700, rounds: 1 }
      : { warmupCycles: 1000, warmupMs: ENSEMBLE_WARMUP_MS, durationMs: 3000, ...full }),
    maxTxnsVsCurator: true,
  };
}

export const WORKLOADS: Workload[] = [
  {
    id: 'uncontended',
    description: 'one session, acquire + release on one free lock, vs the raw client and Curator (tmpfs)',
    run: (ctx) =>
      runUncontended(
        ctx,
        standaloneTarget(ctx.server, ctx.serverStorage),
        'uncontended',
        ctx.quick ? { warmup: 300, rewarm: 20, cycles: 200, blocks: 2, rounds: 2 } : { warmup: 15_000, rewarm: 30, cycles: 3000, blocks: 12, rounds: 7 },
      ),
  },
  {
    id: 'uncontended-disk',
    description: 'the same with the ZooKeeper data directory on disk (fsync on every write)',
    run: async (ctx) =>
      runUncontended(
        ctx,
        standaloneTarget(await ctx.diskServer(), 'disk'),
        'uncontended-disk',
        ctx.quick ? { warmup: 50, rewarm: 10, cycles: 50, blocks: 1, rounds: 1 } : { warmup: 3000, rewarm: 20, cycles: 800, blocks: 8, rounds: 5 },
      ),
  },
  {
    id: 'sessions',
    description: '8 client sessions in 8 processes contending on one lock, vs Curator in 8 JVMs',
    run: (ctx) =>
      runContention(ctx, {
        id: 'sessions',
        title: `${ctx.quick ? 3 : 8} sessions (${ctx.quick ? 3 : 8} processes) contending on one lock`,
        // --quick is a smoke check: fewer JVMs to start.
        processes: ctx.quick ? 3 : 8,
        callersPerProcess: 1,
        ours: ['lockservice', 'lockservice-solo'],
        ...(ctx.quick
          ? { warmupCycles: 100, warmupMs: 300, durationMs: 700, blocks: 2, rounds: 1 }
          : { warmupCycles: 5000, warmupMs: SESSIONS_WARMUP_MS, durationMs: 3000, blocks: 3, rounds: 7 }),
        minRateVsCurator: 1.25,
        maxRequestsPerCycle: 5,
      }),
  },
  {
    id: 'callers',
    description: '64 concurrent async callers in one process on one lock, vs 64 Curator threads on one client',
    run: (ctx) =>
      runContention(ctx, {
        id: 'callers',
        title: '64 concurrent callers in one process (one session) on one lock',
        processes: 1,
        callersPerProcess: 64,
        curatorOwnMutexes: true,
        ours: ['lockservice', 'lockservice-solo'],
        minRateVsCurator: 10,
        maxRequestsPerCycle: 0.5,
        ...(ctx.quick
          ? { warmupCycles: 100, warmupMs: 300, durationMs: 700, rounds: 1 }
          : { warmupCycles: 5000, warmupMs: CURATOR_WARMUP_MS, durationMs: 3000, rounds: 5 }),
      }),
  },
  {
    id: 'cohort-mix',
    description: 'several processes with many callers each on one lock: the cohort queue on and off, vs Curator',
    run: (ctx) =>
      runContention(ctx, {
        id: 'cohort-mix',
        title: `${ctx.quick ? 2 : 4} processes x 16 callers on one lock (the cohort queue across processes)`,
        processes: ctx.quick ? 2 : 4,
        callersPerProcess: 16,
        ours: ['lockservice', 'lockservice-solo'],
        ...(ctx.quick
          ? { warmupCycles: 100, warmupMs: 300, durationMs: 700, rounds: 1 }
          : { warmupCycles: 3000, warmupMs: CURATOR_WARMUP_MS, durationMs: 3000, rounds: 3 }),
      }),
  },
  {
    id: 'herd',
    description: '100 waiters released one at a time: notifications and requests per release, vs the naive recipe',
    run: (ctx) => runHerd(ctx, { waiters: ctx.quick ? 20 : 100, rounds: ctx.quick ? 1 : 3 }),
  },
  {
    id: 'heap',
    description: '10,000 distinct locks held, and 10,000 waiting acquires, in one process: heap per lock, time for all',
    run: (ctx) => runHeap(ctx, ctx.quick ? { locks: 500, rounds: 1 } : { locks: 10_000, rounds: 2 }),
  },
  {
    id: 'http',
    description: 'an HTTP endpoint with @DistributedLock vs the same calling LockService directly (autocannon)',
    run: (ctx) =>
      runHttp(
        ctx,
        ctx.quick
          ? { connections: 16, ids: 64, warmupSeconds: 0.5, seconds: 1, rounds: 1 }
          : { connections: 16, ids: 64, warmupSeconds: 3, seconds: 4, rounds: 5 },
      ),
  },
  {
    // First of the ensemble workloads: it checks that the server's znode count comes back to where it
    // started, which the lock parents other workloads leave for the reaper would disturb.
    id: 'ensemble-many-locks',
    description: '10,000 distinct locks held by one process on a 3-node ensemble, data on disk: heap, time, znodes and watches, vs Curator',
    run: (ctx) => runManyLocks(ctx, ctx.quick ? { locks: 300, rounds: 1, reapWaitMs: 0 } : { locks: 10_000, rounds: 2, reapWaitMs: 300_000 }),
  },
  {
    id: 'ensemble-uncontended',
    description: 'uncontended on a 3-node ensemble, data on disk (fsync): vs the raw floor and Curator, write txns per cycle',
    run: async (ctx) =>
      runUncontended(
        ctx,
        await ctx.ensemble(),
        'ensemble-uncontended',
        ctx.quick ? { warmup: 50, rewarm: 10, cycles: 40, blocks: 1, rounds: 1 } : { warmup: 2000, rewarm: 20, cycles: 600, blocks: 6, rounds: 5 },
        { impls: ['raw-pipelined', 'curator', 'fairlock', 'lockservice'], maxP50VsFloor: 1.05 },
      ),
  },
  {
    id: 'ensemble-sessions',
    description: '8 sessions (processes) on one lock on a 3-node ensemble, data on disk: handoffs/s and write txns per handoff vs Curator',
    run: async (ctx) => {
      const n = ctx.quick ? 3 : 8;
      const settings = await onEnsemble(ctx, 'ensemble-sessions', `${n} sessions (${n} processes) contending`, n, 1, { blocks: 3, rounds: 5 });
      return runContention(ctx, { ...settings, minRateVsCurator: 1.5 });
    },
  },
  {
    id: 'ensemble-cohort-mix',
    description: '4 processes x 16 callers on one lock on a 3-node ensemble, data on disk: handoffs/s and write txns per handoff vs Curator',
    run: async (ctx) => {
      const n = ctx.quick ? 2 : 4;
      return runContention(ctx, await onEnsemble(ctx, 'ensemble-cohort-mix', `${n} processes x 16 callers`, n, 16, { rounds: 3 }));
    },
  },
  {
    id: 'ensemble-drain',
    description: '1,000 waiters on one lock in 8 processes draining on a 3-node ensemble: handoff p50/p99, wake-ups per handoff, vs Curator',
    run: (ctx) => runDrain(ctx, ctx.quick ? { processes: 3, waitersPerProcess: 20, rounds: 1 } : { processes: 8, waitersPerProcess: 125, rounds: 3 }),
  },
  {
    id: 'ensemble-fairness',
    description: '32 processes contending on one lock on a 3-node ensemble: handoffs/s and grants per process, vs Curator (32 sessions in 4 JVMs)',
    run: async (ctx) => {
      const n = ctx.quick ? 8 : 32;
      const perJvm = 8;
      const settings = await onEnsemble(ctx, 'ensemble-fairness', `${n} sessions (${n} processes; Curator: ${n / perJvm} JVM${n > perJvm ? 's' : ''} x ${perJvm} sessions) contending`, n, 1, {
        rounds: 3,
      });
      return runContention(ctx, { ...settings, ours: ['lockservice'], curatorSessionsPerJvm: perJvm, grantsPerSession: true });
    },
  },
  {
    id: 'ensemble-writes',
    description: "write throughput of the 3-node ensemble and of a 5-node one (raw client, pipelined create/delete from several sessions): the capacity model's input",
    run: (ctx) =>
      runWrites(
        ctx,
        ctx.quick
          ? { variants: [{ sessions: 1, inflight: 1 }, { sessions: 3, inflight: 16 }], sizes: [3], durationMs: 700, rounds: 1 }
          : {
              variants: [
                { sessions: 1, inflight: 1 },
                { sessions: 8, inflight: 1 },
                { sessions: 8, inflight: 16 },
                { sessions: 8, inflight: 64 },
              ],
              // A 5-node ensemble too, started for this workload only (not in --quick: it takes a while to start).
              sizes: [3, 5],
              durationMs: 3000,
              rounds: 3,
            },
      ),
  },
  readWriteWorkload,
  simpleLockWorkload,
  {
    id: 'simple-lock-sessions',
    description: 'the simple lock against the fair lock, 8 sessions in 8 processes on one lock',
    run: (ctx) =>
      runContention(ctx, {
        id: 'simple-lock-sessions',
        title: `The simple lock against the fair lock: ${ctx.quick ? 3 : 8} sessions (processes) on one lock`,
        processes: ctx.quick ? 3 : 8,
        callersPerProcess: 1,
        ours: ['fairlock', 'simplelock'],
        noCurator: true,
        ...(ctx.quick
          ? { warmupCycles: 100, warmupMs: 300, durationMs: 700, rounds: 1 }
          : { warmupCycles: 3000, warmupMs: 1000, durationMs: 3000, rounds: 3 }),
      }),
  },
];

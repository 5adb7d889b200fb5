/** Every workload, in the order a full run runs them. `--only` picks by id. */
import type { BenchContext } from '../support/context.js';
import type { WorkloadResult } from '../support/report.js';
import { runContention } from './contention.js';
import { runHerd } from './herd.js';
import { runUncontended } from './uncontended.js';

export interface Workload {
  id: string;
  description: string;
  run(ctx: BenchContext): Promise<WorkloadResult>;
}

export const WORKLOADS: Workload[] = [
  {
    id: 'uncontended',
    description: 'one session, acquire + release on one free lock, vs the raw client and Curator (tmpfs)',
    run: (ctx) =>
      runUncontended(
        ctx,
        ctx.server,
        ctx.serverStorage,
        'uncontended',
        ctx.quick ? { warmup: 1000, rewarm: 50, cycles: 300, rounds: 2 } : { warmup: 15_000, rewarm: 300, cycles: 3000, rounds: 7 },
      ),
  },
  {
    id: 'uncontended-disk',
    description: 'the same with the ZooKeeper data directory on disk (fsync on every write)',
    run: async (ctx) =>
      runUncontended(
        ctx,
        await ctx.diskServer(),
        'disk',
        'uncontended-disk',
        ctx.quick ? { warmup: 300, rewarm: 20, cycles: 100, rounds: 2 } : { warmup: 3000, rewarm: 100, cycles: 800, rounds: 5 },
      ),
  },
  {
    id: 'sessions',
    description: '8 client sessions in 8 processes contending on one lock, vs Curator in 8 JVMs',
    run: (ctx) =>
      runContention(ctx, {
        id: 'sessions',
        title: '8 sessions (8 processes) contending on one lock',
        processes: 8,
        callersPerProcess: 1,
        ...(ctx.quick
          ? { warmupCycles: 300, warmupMs: 500, durationMs: 1000, rounds: 2 }
          : { warmupCycles: 5000, warmupMs: 2000, durationMs: 3000, rounds: 5 }),
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
        ...(ctx.quick
          ? { warmupCycles: 300, warmupMs: 500, durationMs: 1000, rounds: 2 }
          : { warmupCycles: 5000, warmupMs: 2000, durationMs: 3000, rounds: 5 }),
      }),
  },
  {
    id: 'herd',
    description: '100 waiters released one at a time: notifications and requests per release, vs the naive recipe',
    run: (ctx) => runHerd(ctx, { waiters: 100, rounds: ctx.quick ? 1 : 3 }),
  },
];

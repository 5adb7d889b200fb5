/** Every workload, in the order a full run runs them. `--only` picks by id. */
import type { BenchContext } from '../support/context.js';
import type { WorkloadResult } from '../support/report.js';
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
];

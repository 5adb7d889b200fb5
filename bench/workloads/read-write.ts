/**
 * The read/write lock at 90% reads: 8 processes, one caller each, every operation a read or a
 * write drawn from a fixed-seed generator, each held for 1 ms (so that reads can overlap and writes
 * cannot), against Curator's InterProcessReadWriteLock in 8 JVMs. The same contention machinery as
 * `sessions` (contention.ts): operations per second, waits, requests and notifications per
 * operation, evenness across processes.
 */
import { CURATOR_WARMUP_MS, runContention } from './contention.js';
import type { Workload } from './index.js';

export const readWriteWorkload: Workload = {
  id: 'rwlock',
  description: 'read/write lock, 90% reads held 1 ms, 8 processes, vs Curator InterProcessReadWriteLock',
  run: (ctx) =>
    runContention(ctx, {
      id: 'rwlock',
      title: `Read/write lock, 90% reads held 1 ms: ${ctx.quick ? 3 : 8} sessions (processes) on one lock`,
      processes: ctx.quick ? 3 : 8,
      callersPerProcess: 1,
      readPercent: 90,
      holdMs: 1,
      ...(ctx.quick
        ? { warmupCycles: 100, warmupMs: 300, durationMs: 700, rounds: 1 }
        : { warmupCycles: 3000, warmupMs: CURATOR_WARMUP_MS, durationMs: 3000, rounds: 3 }),
    }),
};

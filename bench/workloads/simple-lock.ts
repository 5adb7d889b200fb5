/**
 * TODO(simple lock vs fair lock): waiting for the simple (non-fair) lock recipe, which is being built
 * on main (lib/recipes/). Not run; `npm run bench -- --list` shows it as pending.
 *
 * Intended design, once lib/ exports it:
 * - lock-worker.ts gets a `simplelock` implementation beside `fairlock` (same commands: uncontended
 *   and contend), so every existing measurement runs for both.
 * - Workload: uncontended (as in `uncontended`: p50/p99, cycles/s, requests per cycle, vs the raw
 *   floor) and 8 sessions contending (as in `sessions`: handoff rate, waits, requests per cycle,
 *   fewest/most cycles per process, which is where an unfair lock differs), simple vs fair in the
 *   same rounds, reported as simple/fair ratios.
 * - Expected to show: what fairness costs in handoff rate and what it buys in evenness and p99 wait.
 */
import type { Workload } from './index.js';

export const simpleLockWorkload: Workload = {
  id: 'simple-lock',
  description: 'the simple lock against the fair lock: uncontended and 8 sessions',
  pending: 'the simple lock recipe is being built on main; see bench/workloads/simple-lock.ts for the design',
  run: () => Promise.reject(new Error('not implemented: waiting for the simple lock recipe')),
};

/**
 * TODO(read/write lock): waiting for the recipe, which is being built on main (lib/recipes/).
 * Not run; `npm run bench -- --list` shows it as pending.
 *
 * Intended design, once lib/ exports the read/write lock:
 * - Workers: add `rw-read` / `rw-write` commands to the line protocol (support/protocol.ts), or one
 *   `mixed path=... callers=c readPercent=90 startAt durationMs` command, to lock-worker.ts (ours)
 *   and CuratorBench.java (InterProcessReadWriteLock: readLock()/writeLock() of one instance).
 * - Workload: 8 processes (as in `sessions`), each caller drawing read or write with a fixed-seed
 *   generator at 90% reads, holding each lock for a fixed 1 ms (so reads overlap and writes do not),
 *   3 s windows, 5 rounds alternating ours and Curator.
 * - Report: operations/s, read-wait and write-wait p50/p99, server requests per operation and
 *   notifications per release (a write release should wake the run of readers behind it and no
 *   one else; a read release should wake nobody unless it was the last reader before a writer),
 *   ratios vs Curator. A second row with 100% reads shows the readers-never-wait floor.
 * - Check (to agree with the issue): readers behind readers do not wait; no herd on release.
 */
import type { Workload } from './index.js';

export const readWriteWorkload: Workload = {
  id: 'rwlock',
  description: 'read/write lock, 90% reads, 8 processes, vs Curator InterProcessReadWriteLock',
  pending: 'the read/write lock recipe is being built on main; see bench/workloads/read-write.ts for the design',
  run: () => Promise.reject(new Error('not implemented: waiting for the read/write lock recipe')),
};

/**
 * Memory per lock: heap per held lock and per waiting acquire (10,000 of each, distinct locks), and
 * the time to take, hand over and release them all. Each measurement runs in a fresh process with
 * --expose-gc (workers/heap-worker.ts), for LockService and for the bare FairLock.
 */
import { join } from 'node:path';
import { runOnce } from '../support/children.js';
import type { BenchContext } from '../support/context.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure, type Figure } from '../support/stats.js';
import type { HeapResult } from '../workers/heap-worker.js';

const TARGET_BYTES = 2048;
const VIA_LABELS: Record<string, string> = {
  lockservice: 'LockService',
  'lockservice-solo': 'LockService with cohort: false',
  fairlock: 'FairLock',
};

export async function runHeap(ctx: BenchContext, settings: { locks: number; rounds: number }): Promise<WorkloadResult> {
  const script = join(ctx.buildDir, 'bench/workers/heap-worker.js');
  const cases = [
    { via: 'lockservice', mode: 'held' },
    { via: 'lockservice-solo', mode: 'held' },
    { via: 'fairlock', mode: 'held' },
    { via: 'lockservice', mode: 'waiting' },
    { via: 'lockservice-solo', mode: 'waiting' },
    { via: 'fairlock', mode: 'waiting' },
  ] as const;
  const runs = new Map<string, HeapResult[]>(cases.map((c) => [`${c.via}:${c.mode}`, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of cases) {
      ctx.log(`heap: ${c.via}, ${settings.locks} ${c.mode}, round ${round + 1}/${settings.rounds}`);
      const result = await runOnce<HeapResult>(`heap-${c.via}-${c.mode}`, script, {
        connect: ctx.server.connectString,
        port: ctx.server.clientPort,
        sessionTimeoutMs: ctx.sessionTimeoutMs,
        locks: settings.locks,
        ...c,
      }, ['--expose-gc']);
      runs.get(`${c.via}:${c.mode}`)!.push(result);
    }
  }
  const of = (key: string, pick: (r: HeapResult) => number | undefined): Figure | undefined => {
    const values = runs.get(key)!.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? figure(values) : undefined;
  };
  const label = (via: string, mode: string): string =>
    `${VIA_LABELS[via]}: ${settings.locks.toLocaleString('en-US')} ${mode === 'held' ? 'held locks' : 'waiting acquires'}`;
  const rows = cases.map((c) => {
    const key = `${c.via}:${c.mode}`;
    return {
      subject: label(c.via, c.mode),
      cells: {
        bytes: of(key, (r) => r.bytesPerLock),
        firstTake: of(key, (r) => (r.firstTakeMs === undefined ? undefined : r.firstTakeMs / 1000)),
        take: of(key, (r) => (r.takeMs === undefined ? undefined : r.takeMs / 1000)),
        handoff: of(key, (r) => (r.handoffMs === undefined ? undefined : r.handoffMs / 1000)),
        release: of(key, (r) => r.releaseMs / 1000),
        requests: of(key, (r) => r.requestsPerAcquire),
      },
    };
  });
  const checks: Check[] = cases.map((c) => {
    const bytes = of(`${c.via}:${c.mode}`, (r) => r.bytesPerLock)!.median;
    return {
      target: `${VIA_LABELS[c.via]}: at most 2 KB of heap per ${c.mode === 'held' ? 'held lock' : 'waiting acquire'}`,
      measured: `${formatNumber(bytes)} bytes`,
      met: bytes <= TARGET_BYTES,
    };
  });
  return {
    id: 'heap',
    title: `Memory and time for ${settings.locks.toLocaleString('en-US')} distinct locks in one process`,
    columns: [
      { key: 'bytes', label: 'heap bytes/lock', digits: 0 },
      { key: 'firstTake', label: 'take all, new parents (s)', digits: 2 },
      { key: 'take', label: 'take all (s)', digits: 2 },
      { key: 'handoff', label: 'hand all over (s)', digits: 2 },
      { key: 'release', label: 'release all (s)', digits: 2 },
      { key: 'requests', label: 'requests/acquire', digits: 2 },
    ],
    rows,
    checks,
    notes: [
      `${settings.rounds} fresh process(es) per row; heapUsed after forced full collections. All acquires of a pass are started at once.`,
      '"take all, new parents": the first pass, which also creates each lock\'s parent (container) node; "take all": a second pass, parents present (the heap is measured there).',
      '"hand all over": waiting rows only, from the holding session\'s first release until all waiters hold their lock; requests/acquire there counts the queueing (create, list, watch).',
    ],
    details: { settings, runs: Object.fromEntries(runs) },
  };
}

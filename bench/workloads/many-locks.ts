/**
 * `ensemble-many-locks`: one process takes N distinct locks at once on the 3-node ensemble and keeps
 * them, then lets them all go; LockService against Curator's InterProcessMutex (in its own JVM, on
 * 64 threads: a mutex belongs to the thread that took it, and blocks it while it waits). Reported:
 * heap per held lock, the time to take all (on new parents, then with the parents there) and to
 * release all, the write transactions and requests per lock, and what the server holds meanwhile:
 * znodes (the leader's `zk_znode_count`: the data tree is the same on every member) and watches
 * (`zk_watch_count`, summed: a watch lives on the member its session uses). After the release every
 * ephemeral node and watch must be gone (the workload fails otherwise); the lock parents are
 * containers, which the server reaps on its own schedule (every 60 s, at most 10,000 a minute), so a
 * full run also waits until the znode count is back where it started.
 */
import type { LineWorker } from '../support/children.js';
import { type BenchContext, type Impl, stopWorkers } from '../support/context.js';
import type { Counters } from '../support/mntr.js';
import type { HoldAnswer, ReleaseAllAnswer } from '../support/protocol.js';
import { type Check, formatNumber, type WorkloadResult } from '../support/report.js';
import { figure } from '../support/stats.js';
import { type EnsembleTarget, describeSpread, placedWorkers } from '../support/target.js';

export interface ManyLocksSettings {
  locks: number;
  rounds: number;
  /** Wait (at most this long, ms) for the server to reap the lock parents; 0: do not wait. */
  reapWaitMs: number;
}

const LABELS: Partial<Record<Impl, string>> = {
  lockservice: 'ours: LockService',
  curator: 'Curator InterProcessMutex (64 threads)',
};

interface Pass {
  heapBytesPerLock: number;
  firstTakeS: number;
  takeS: number;
  releaseS: number;
  txnsPerLock: number;
  requestsPerLock: number;
  znodesHeld: number;
  watchesHeld: number;
}

export async function runManyLocks(ctx: BenchContext, settings: ManyLocksSettings): Promise<WorkloadResult> {
  const target = await ctx.ensemble();
  const impls: Impl[] = ['lockservice', ...(ctx.curator ? (['curator'] as const) : [])];
  const root = `/bench-many-locks-${Date.now().toString(36)}`;
  const follower = target.members[0]!;
  // Each implementation's lock parents go under a persistent node made beforehand, so that both
  // create only containers (Curator would make the missing ancestors containers too, ours persistent).
  const maker = (await placedWorkers(ctx, target, 'raw-pipelined', ['many-locks-roots'], new Map([[follower, 1]]))).workers[0]!;
  try {
    for (const impl of impls) await maker.ask({ name: 'uncontended', path: `${root}/${impl}`, cycles: 0 });
  } finally {
    await stopWorkers([maker]);
  }
  const start = await target.counters();
  const passes = new Map<Impl, Pass[]>(impls.map((impl) => [impl, []]));
  const spreads: string[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    for (const impl of round % 2 ? [...impls].reverse() : impls) {
      ctx.log(`ensemble-many-locks: ${impl}, ${settings.locks} locks, round ${round + 1}/${settings.rounds}`);
      const placed = await placedWorkers(ctx, target, impl, [`many-locks-${impl}`], new Map([[follower, 1]]));
      spreads.push(describeSpread(target, placed.members));
      try {
        passes.get(impl)!.push(await onePass(placed.workers[0]!, target, `${root}/${impl}`, `r${round}`, settings.locks));
      } finally {
        await stopWorkers(placed.workers);
      }
    }
  }
  const afterRelease = await target.counters();
  const leftToReap = afterRelease.znodes - start.znodes;
  let reapedAfterS: number | undefined;
  if (settings.reapWaitMs > 0) {
    ctx.log(`ensemble-many-locks: waiting for the server to reap ${leftToReap} empty lock parents (containers)`);
    reapedAfterS = await waitForZnodes(target, start.znodes, settings.reapWaitMs);
  }
  return summarise(ctx, settings, impls, passes, { start, afterRelease, leftToReap, reapedAfterS, spread: [...new Set(spreads)].join(' / ') });
}

/** Warm-up, a first pass on new parents, then a second (parents there) measured for heap and the server. */
async function onePass(worker: LineWorker, target: EnsembleTarget, root: string, names: string, locks: number): Promise<Pass> {
  await worker.ask({ name: 'uncontended', path: `${root}/warm`, cycles: 500 });
  // New names every round: the parents of an earlier round may not be reaped yet.
  const path = `${root}/${names}`;
  const first = await worker.ask<HoldAnswer>({ name: 'hold', path, count: locks }, 600_000);
  await worker.ask<ReleaseAllAnswer>({ name: 'releaseAll' }, 600_000);
  const before = await settled(target);
  const held = await worker.ask<HoldAnswer>({ name: 'hold', path, count: locks, gc: 1 }, 600_000);
  const during = await target.counters();
  const release = await worker.ask<ReleaseAllAnswer>({ name: 'releaseAll' }, 600_000);
  const after = await settled(target);
  if (after.ephemerals !== before.ephemerals || after.watches !== before.watches) {
    throw new Error(
      `left behind after releasing ${locks} locks: ${after.ephemerals - before.ephemerals} ephemeral node(s), ${after.watches - before.watches} watch(es)`,
    );
  }
  return {
    heapBytesPerLock: (held.heapAfterBytes - held.heapBeforeBytes) / locks,
    firstTakeS: first.takeMs / 1000,
    takeS: held.takeMs / 1000,
    releaseS: release.releaseMs / 1000,
    txnsPerLock: (after.proposals - before.proposals) / locks,
    requestsPerLock: (after.requests - before.requests) / locks,
    znodesHeld: during.znodes - before.znodes,
    watchesHeld: during.watches - before.watches,
  };
}

/**
 * The counters once the members agree: a release is acknowledged by the member its session uses,
 * and the others may apply the deletes (and drop their watches) a moment later.
 */
async function settled(target: EnsembleTarget): Promise<Counters> {
  let last = await target.counters();
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const next = await target.counters();
    if (next.znodes === last.znodes && next.watches === last.watches && next.ephemerals === last.ephemerals) return next;
    last = next;
  }
  return last;
}

/** Seconds until the leader's znode count is back to `znodes`; throws after `timeoutMs`. */
async function waitForZnodes(target: EnsembleTarget, znodes: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const now = (await target.counters()).znodes;
    if (now === znodes) return (Date.now() - t0) / 1000;
    if (now < znodes) throw new Error(`the ensemble holds ${znodes - now} znode(s) fewer than at the start: something else deleted nodes meanwhile`);
    if (Date.now() - t0 > timeoutMs) throw new Error(`${now - znodes} znode(s) still left ${timeoutMs / 1000} s after the release (the server reaps empty containers every 60 s)`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function summarise(
  ctx: BenchContext,
  settings: ManyLocksSettings,
  impls: Impl[],
  passes: Map<Impl, Pass[]>,
  server: { start: Counters; afterRelease: Counters; leftToReap: number; reapedAfterS: number | undefined; spread: string },
): WorkloadResult {
  const of = (impl: Impl, key: keyof Pass) => figure(passes.get(impl)!.map((p) => p[key]));
  const n = settings.locks.toLocaleString('en-US');
  const checks: Check[] = [
    {
      target: 'no ephemeral node and no watch left on the server after releasing every lock',
      measured: 'none left (checked after every pass; the workload fails otherwise)',
      met: true,
    },
    {
      target: 'the znode count back to its starting value once the server has reaped the empty lock parents',
      measured:
        server.reapedAfterS === undefined
          ? `not waited for (--quick): ${formatNumber(server.leftToReap)} empty containers left to the reaper`
          : `back to ${formatNumber(server.start.znodes)} ${formatNumber(server.reapedAfterS)} s after the last release (${formatNumber(server.leftToReap)} empty containers were left then)`,
      met: server.reapedAfterS === undefined ? undefined : true,
    },
  ];
  return {
    id: 'ensemble-many-locks',
    title: `${n} distinct locks held at once by one process, 3-node ensemble (data on disk, fsync on)`,
    columns: [
      { key: 'heap', label: 'heap bytes/lock', digits: 0 },
      { key: 'firstTake', label: 'take all, new parents (s)', digits: 2 },
      { key: 'take', label: 'take all (s)', digits: 2 },
      { key: 'release', label: 'release all (s)', digits: 2 },
      { key: 'txns', label: 'write txns/lock', digits: 2 },
      { key: 'requests', label: 'requests/lock', digits: 2 },
      { key: 'znodes', label: 'znodes while held', digits: 0 },
      { key: 'watches', label: 'watches while held', digits: 0 },
    ],
    rows: impls.map((impl) => ({
      subject: LABELS[impl]!,
      cells: {
        heap: of(impl, 'heapBytesPerLock'),
        firstTake: of(impl, 'firstTakeS'),
        take: of(impl, 'takeS'),
        release: of(impl, 'releaseS'),
        txns: of(impl, 'txnsPerLock'),
        requests: of(impl, 'requestsPerLock'),
        znodes: of(impl, 'znodesHeld'),
        watches: of(impl, 'watchesHeld'),
      },
    })),
    checks,
    notes: [
      `${settings.rounds} round(s), a fresh process per implementation and round, its session on a follower (${server.spread}); each round takes all ${n} at once twice: first on new parents (each lock's parent, a container, created on the way), then with the parents there, which is the pass measured for heap and for the server.`,
      "heap: ours V8's heapUsed, Curator the JVM's heap in use, each after forced full collections (Curator's 64 threads' stacks not counted). write txns and requests per lock: taking and releasing, from the leader's zk_proposal_count and every member's request count.",
      `znodes while held: the change in the leader's zk_znode_count (each lock's node; its parent is there from the first pass); watches: zk_watch_count summed over the members. After the release: no ephemeral node or watch left; ${formatNumber(server.leftToReap)} empty parents (containers) left for the server to reap${server.reapedAfterS === undefined ? ' (not waited for in --quick)' : `, gone ${formatNumber(server.reapedAfterS)} s later`}. The reaper may also delete an earlier round's empty parents during a pass: that would show as fewer znodes and more than 2 write txns per lock.`,
      ...(ctx.curator ? [] : [`no Curator in this run (${ctx.curatorMissing})`]),
    ],
    details: { settings, start: server.start, afterRelease: server.afterRelease, reapedAfterS: server.reapedAfterS, passes: Object.fromEntries(passes) },
  };
}

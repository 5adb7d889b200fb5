/**
 * One rolling restart, as operators run a ZooKeeper upgrade: a 3-member ensemble with ZooKeeper's
 * sample timing (tickTime 2000, syncLimit 5); 3 client processes with the library's defaults (15 s
 * sessions, the default lease margin, no cohort) looping on 3 exclusive locks; each member in turn
 * stopped, kept down `downMs`, started, and given time to sync. Returns lost holds, failed and
 * timed-out acquires, overlaps and the checker's other violations (fencing tokens only growing,
 * FIFO), and for each restart the longest time no acquire was granted (the stall). Beside the load,
 * this process holds one lock through the whole run on an otherwise idle session (default options):
 * only its renewal reads (after a quarter of the lease) renew its lease, so it meets each restart with
 * up to a quarter of it gone, and a renewal lost in the election must be sent again on reconnecting:
 * the case the load's busy sessions never show.
 */
import { LockService } from '../../lib/service/lock.service.js';
import { startZkEnsemble } from '../support/zk-server.js';
import { type ClientEvent, monotonicMs } from './history.js';
import { FaultHarness, type HarnessOptions } from './harness.js';

export interface RollingOptions {
  /** How long each member stays down, ms. */
  readonly downMs: number;
  /** After a member serves again, before the next one stops (it syncs with the leader meanwhile), ms. */
  readonly settleMs: number;
  readonly sessionTimeoutMs: number;
  /** undefined: the library's default margin. */
  readonly leaseMarginMs: number | undefined;
  readonly seed: number;
  readonly log: (line: string) => void;
}

export const ROLLING_DEFAULTS: RollingOptions = {
  downMs: 3000,
  settleMs: 5000,
  sessionTimeoutMs: 15_000,
  leaseMarginMs: undefined,
  seed: 20261128,
  log: () => undefined,
};

export interface RestartFigures {
  readonly member: number;
  readonly wasLeader: boolean;
  /** The longest stretch without a grant, from the stop to settleMs after it serves again. */
  readonly stallMs: number;
}

export interface RollingFigures {
  readonly acquisitions: number;
  readonly lost: number;
  readonly failed: number;
  readonly timedOut: number;
  readonly overlaps: number;
  readonly violations: string[];
  readonly restarts: RestartFigures[];
  /** The distinct reasons given for lost holds (durations blanked). */
  readonly lostDetails: string[];
  /** Why the idle session's long hold ended before the run did; undefined: it was held throughout. */
  readonly longHoldLost: string | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function runRollingRestart(options: Partial<RollingOptions> = {}): Promise<RollingFigures> {
  const o: RollingOptions = { ...ROLLING_DEFAULTS, ...stripUndefined(options) };
  const harnessOptions: HarnessOptions = {
    clients: 3,
    resources: { a: ['exclusive'], b: ['exclusive'], c: ['exclusive'] },
    sessionTimeoutMs: o.sessionTimeoutMs,
    leaseMarginMs: o.leaseMarginMs,
    waitTimeoutMs: 60_000,
    holdMs: 20,
    thinkMs: 5,
    seed: o.seed,
    callers: 1,
    cohort: false,
  };
  const ensemble = await startZkEnsemble(3, { tickMs: 2000 });
  const harness = new FaultHarness(ensemble, harnessOptions);
  const windows: { member: number; wasLeader: boolean; from: number; to: number }[] = [];
  const idle = new LockService({ connectionString: ensemble.connectString, rootPath: '/rolling-long', rootAclCheck: 'off', logEvents: false, sessionTimeoutMs: o.sessionTimeoutMs, leaseMarginMs: o.leaseMarginMs });
  try {
    await idle.onModuleInit();
    const long = await idle.acquire('long');
    await harness.start();
    await sleep(3000);
    for (const server of ensemble.servers) {
      const leader = await ensemble.leader().catch(() => undefined);
      const wasLeader = leader?.id === server.id;
      harness.record('stop-server', `zk${server.id}`, wasLeader ? 'leader' : 'follower');
      const from = monotonicMs();
      await server.stop();
      await sleep(o.downMs);
      harness.record('start-server', `zk${server.id}`);
      await server.start();
      await harness.healthy();
      await sleep(o.settleMs);
      windows.push({ member: server.id, wasLeader, from, to: monotonicMs() });
      o.log(`member ${server.id} (${wasLeader ? 'leader' : 'follower'}) restarted`);
    }
    const longHoldLost = long.signal.aborted ? String((long.signal.reason as Error | undefined)?.message ?? long.signal.reason) : undefined;
    await long.release().catch(() => undefined);
    const { result } = await harness.finish();
    const events = harness.events;
    const lost = events.filter((e): e is Extract<ClientEvent, { type: 'lost' }> => e.type === 'lost');
    return {
      acquisitions: result.figures.acquisitions,
      lost: lost.length,
      failed: result.figures.failures,
      timedOut: result.figures.timeouts,
      overlaps: result.violations.filter((v) => v.endsWith(' at once')).length,
      violations: result.violations,
      restarts: windows.map((w) => ({ member: w.member, wasLeader: w.wasLeader, stallMs: longestGap(events, w.from, w.to) })),
      lostDetails: [...new Set(lost.map((e) => e.detail.replace(/\d+ ms/g, 'N ms').slice(0, 240)))],
      longHoldLost,
    };
  } finally {
    await idle.onApplicationShutdown();
    await ensemble.stop();
  }
}

/** "zk1 207 ms, zk2 140 ms, zk3 (leader) 1290 ms" */
export function describeStalls(restarts: readonly RestartFigures[]): string {
  return restarts.map((r) => `zk${r.member}${r.wasLeader ? ' (leader)' : ''} ${Math.round(r.stallMs)} ms`).join(', ');
}

/** The longest interval in [from, to] without a grant. */
function longestGap(events: readonly ClientEvent[], from: number, to: number): number {
  const grants = events.filter((e) => e.type === 'granted' && e.t >= from && e.t <= to).map((e) => e.t);
  let last = from;
  let longest = 0;
  for (const t of [...grants, to]) {
    longest = Math.max(longest, t - last);
    last = t;
  }
  return longest;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

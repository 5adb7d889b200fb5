/**
 * Once per tick: the record of the last tick a scheduled job ran, one small persistent node per job,
 * overwritten by each run and claimed with a compare-and-set on its version, so that however many
 * instances fire for one tick (and however far apart their clocks are), one of them runs it.
 *
 * The record lives at `<rootPath>/#ticks/<encoded resource>/<encoded job>`. `#` is a character
 * encodeResource never leaves as it is, so no resource's lock can be there, and inspectAll (the CLI,
 * the live view) leaves the folder out. A record is never deleted: there is one per job.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { InvalidOptionsError, shown, ZkLockError } from '../errors.js';
import type { ParentModes } from '../queue/layouts.js';
import { encodeResource } from '../zookeeper/paths.js';
import { readNode } from '../zookeeper/session-retry.js';
import { ZK_CODES, ZkConnectionLossError, ZkError, ZkNoNodeError } from '../zookeeper/zk-errors.js';
import type { NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { RecipeRuntime } from './recipe-runtime.js';

/** The folder of the tick records, under rootPath. */
export const TICKS_FOLDER = '#ticks';

/** A record and its folders persist: there is one per job, never deleted. */
const RECORD_MODES: ParentModes = { parent: 'PERSISTENT', ancestors: 'PERSISTENT' };

/** One tick of a scheduled job to claim (LockService.claimTick). */
export interface TickClaim {
  /**
   * Names the job among those locking the same resource, so that two jobs sharing a lock keep
   * separate records. `@DistributedLock` uses `Class.method`.
   */
  readonly job: string;
  /**
   * The schedule, as text (`cron 0 * * * * *`, `interval 60000`): a record written under another
   * schedule (the expression changed between deployments) does not count as this tick run.
   */
  readonly schedule: string;
  /**
   * The tick, in ms since the epoch, as the caller computes it (for a cron job: the fire time that
   * follows this run, the same on every instance whose clock is less than a period off): due when
   * later than the one recorded. Absent: the tick is ZooKeeper's time of the claim, due when
   * `periodMs` has passed on that clock since the last run.
   * @default undefined (ZooKeeper's time, with periodMs)
   */
  readonly tick?: number;
  /**
   * When `tick` is absent, how long after the last run the next is due, in ms, on ZooKeeper's
   * clock (an interval job's period), less a tenth of it, at most 1000 ms, for the instances' timers
   * to jitter in (see intervalSlackMs).
   * @default undefined (required when tick is absent)
   */
  readonly periodMs?: number;
  /**
   * With `periodMs`: when the job fired, on `performance.now()`'s clock. The run is timed from then
   * on ZooKeeper's clock (the stamp less the time since), so that a wait for the lock or a slow
   * answer does not make a run look later than its timer fired, and the next one early.
   * @default undefined (the run is timed from the claim)
   */
  readonly firedAt?: number;
}

/** What a claim found: this caller runs the tick, or it already ran. */
export interface TickClaimResult {
  /** True when this caller claimed the tick and should run it. */
  readonly claimed: boolean;
  /** The tick claimed or found already run, in ms since the epoch. */
  readonly tick: number;
}

/** What a record holds. */
interface TickRecord {
  readonly schedule: string;
  readonly tick: number;
  /** Who claimed it: host, pid, and a token unique to the claim (to recognise our own write after a lost reply). */
  readonly host?: string;
  readonly pid?: number;
  readonly claim?: string;
}

/** Checks a claim. @throws InvalidOptionsError naming what to give */
export function checkTickClaim(claim: TickClaim): void {
  if (claim === null || typeof claim !== 'object') throw new InvalidOptionsError('claim', 'must be an object { job, schedule, tick } or { job, schedule, periodMs }');
  if (typeof claim.job !== 'string' || claim.job.length === 0) throw new InvalidOptionsError('claim.job', `must be a non-empty string naming the job, got ${shown(claim.job)}`);
  if (typeof claim.schedule !== 'string') throw new InvalidOptionsError('claim.schedule', `must be a string describing the schedule, got ${shown(claim.schedule)}`);
  if (claim.tick !== undefined) {
    if (!Number.isFinite(claim.tick)) throw new InvalidOptionsError('claim.tick', `must be a time in ms since the epoch, got ${shown(claim.tick)}`);
    return;
  }
  if (claim.firedAt !== undefined && !Number.isFinite(claim.firedAt)) {
    throw new InvalidOptionsError('claim.firedAt', `must be a performance.now() reading, got ${shown(claim.firedAt)}`);
  }
  const { periodMs } = claim;
  if (typeof periodMs !== 'number' || !Number.isFinite(periodMs) || periodMs <= 0) {
    throw new InvalidOptionsError('claim.periodMs', `must be a positive number of ms when tick is not given, got ${shown(periodMs)}`);
  }
}

/** The record's path. */
export function tickRecordPath(rootPath: string, resource: string, job: string): string {
  return `${rootPath}/${TICKS_FOLDER}/${encodeResource(resource)}/${encodeResource(job)}`;
}

/**
 * Whether a claim at `tick` is due: later than the tick recorded, or, with `periodMs`, at least the
 * period (less intervalSlackMs) after it. A record of another schedule, or none, is no run.
 */
export function isDue(record: Pick<TickRecord, 'schedule' | 'tick'> | undefined, schedule: string, tick: number, periodMs?: number): boolean {
  if (record === undefined || record.schedule !== schedule) return true;
  return periodMs === undefined ? tick > record.tick : tick - record.tick >= periodMs - intervalSlackMs(periodMs);
}

/**
 * How much sooner than its period an interval job is due again, in ms: a tenth of the period, at
 * most a second. The instance that ran fires again one period after its own run, give or take its
 * timer's jitter and ZooKeeper's latency; without slack it could find itself a few ms short.
 */
export function intervalSlackMs(periodMs: number): number {
  return Math.min(periodMs / 10, 1000);
}

/**
 * Claims `claim`'s tick: reads the record and, when the tick is due, writes it in a transaction
 * that checks the version read, so of two claimants of one tick exactly one succeeds. Without a
 * tick, ZooKeeper's time is learned first by writing the record unchanged and reading the time the
 * server stamped on it. `stop` (the caller's lock signal) ends the retries through connection loss.
 */
export async function claimTick(runtime: RecipeRuntime, resource: string, claim: TickClaim, stop: AbortSignal): Promise<TickClaimResult> {
  checkTickClaim(claim);
  runtime.pathOf(resource); // a name that cannot be a lock cannot name a record either
  const path = tickRecordPath(runtime.rootPath, resource, claim.job);
  const session = await runtime.sessions.session(stop);
  const token = randomUUID();
  for (;;) {
    const node = await readNode(session, path, stop);
    if (!node) {
      await runtime.parents.ensure(session, path, RECORD_MODES, stop);
      continue;
    }
    const seen = await stampedTick(session, path, node, claim, stop);
    if (!seen) continue; // another claimant wrote in between: read again
    const { tick, version, record } = seen;
    if (!isDue(record, claim.schedule, tick, claim.periodMs)) return { claimed: false, tick };
    const data = Buffer.from(JSON.stringify({ schedule: claim.schedule, tick, host: hostname(), pid: process.pid, claim: token }));
    const written = await writeIfVersion(session, path, version, data, stop);
    if (written === 'written') return { claimed: true, tick };
    if (written === 'unknown') {
      // The reply was lost: the record says whether our write went through.
      const after = await readNode(session, path, stop);
      if (after && parseRecord(after.data)?.claim === token) return { claimed: true, tick };
    }
  }
}

/**
 * The tick of this claim with the record's version to write over: the caller's tick, or the time
 * the server stamps on an unchanged rewrite of the record. Undefined when someone else wrote the
 * record meanwhile.
 */
async function stampedTick(
  session: ZkSessionApi,
  path: string,
  node: NodeData,
  claim: TickClaim,
  stop: AbortSignal,
): Promise<{ tick: number; version: number; record: TickRecord | undefined } | undefined> {
  const record = parseRecord(node.data);
  if (claim.tick !== undefined) return { tick: claim.tick, version: node.stat.version, record };
  const sent = performance.now();
  if ((await writeIfVersion(session, path, node.stat.version, node.data, stop)) !== 'written') return undefined;
  const answered = performance.now();
  const stamped = await readNode(session, path, stop);
  if (!stamped || stamped.stat.version !== node.stat.version + 1) return undefined;
  const { mtime } = stamped.stat;
  if (!mtime) throw new ZkLockError('ZooKeeper did not report the time of a write (mtime): an interval cannot be measured on its clock');
  // The server stamped the write between its sending and its answer: halfway, as well as we can tell.
  const sinceFired = claim.firedAt === undefined ? 0 : Math.max(0, (sent + answered) / 2 - claim.firedAt);
  return { tick: mtime.getTime() - sinceFired, version: stamped.stat.version, record };
}

/** Writes the record if it is still at `version`: 'conflict' if it is not, 'unknown' if the reply was lost. */
async function writeIfVersion(
  session: ZkSessionApi,
  path: string,
  version: number,
  data: Buffer,
  stop: AbortSignal,
): Promise<'written' | 'conflict' | 'unknown'> {
  if (!session.connected) await session.whenConnected(stop);
  try {
    // Not retried blindly: the reply may be what was lost, and the caller reads the record to know.
    await session.multi([{ op: 'check', path, version }, { op: 'setData', path, data }]);
    return 'written';
  } catch (error) {
    if (error instanceof ZkConnectionLossError) return 'unknown';
    // Rewritten or deleted meanwhile: read it again.
    if (error instanceof ZkNoNodeError || (error instanceof ZkError && error.code === ZK_CODES.BADVERSION)) return 'conflict';
    throw error;
  }
}

/** The record in a node's data; undefined for an empty or foreign one (then any tick is new). */
function parseRecord(data: Buffer): TickRecord | undefined {
  if (data.length === 0) return undefined;
  try {
    const parsed = JSON.parse(data.toString('utf8')) as Partial<TickRecord> | null;
    if (typeof parsed?.schedule !== 'string' || typeof parsed.tick !== 'number') return undefined;
    return parsed as TickRecord;
  } catch {
    return undefined;
  }
}

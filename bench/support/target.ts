/**
 * What a workload runs against: the standalone server, or a 3-node ensemble on loopback with its
 * data directory and transaction log on disk (fsync on every write, ZooKeeper's default
 * `forceSync=yes`), as production runs ZooKeeper.
 *
 * On an ensemble, every client is given the connect string of all three members, as production
 * does; the member a session landed on is read from its id (a session id's top byte is the myid of
 * the member that created it). Requests and notifications are summed over the members (each request
 * is counted only by the member its client is connected to); write transactions are the leader's
 * `zk_proposal_count`, which counts every quorum write once, whichever member took it.
 */
import { readFileSync, statfsSync } from 'node:fs';
import type { ZkEnsemble, ZkServer } from '../../test/support/zk-server.js';
import type { LineWorker } from './children.js';
import { type BenchContext, connectedWorkerSession, type Impl } from './context.js';
import { type Counters, readCounters } from './mntr.js';
import type { Column } from './report.js';

export interface BenchTarget {
  readonly kind: 'standalone' | 'ensemble';
  /** Every member's `127.0.0.1:<port>`, comma-separated. */
  readonly connectString: string;
  /** Where the data directory is, for table titles ("tmpfs (/dev/shm)", "disk"...). */
  readonly storage: string;
  /** Server-side counters, summed over the members; `proposals` from the leader. */
  counters(): Promise<Counters>;
}

export interface EnsembleTarget extends BenchTarget {
  readonly kind: 'ensemble';
  readonly ensemble: ZkEnsemble;
  readonly leaderId: number;
  /** Member ids, followers first (by id), the leader last. */
  readonly members: number[];
  /** The leader's `Zxid` (srvr), hex: windows of the transaction log can be looked up afterwards. */
  zxid(): Promise<string>;
}

/** The columns an ensemble adds to a per-cycle table: the leader's write transactions and the servers' CPU. */
export const ENSEMBLE_COLUMNS: readonly Column[] = [
  { key: 'txns', label: 'write txns/cycle', digits: 2 },
  { key: 'serverCpu', label: 'server CPU µs/cycle', digits: 0 },
];

export function standaloneTarget(server: ZkServer, storage: string): BenchTarget {
  return { kind: 'standalone', connectString: server.connectString, storage, counters: () => readCounters(server.clientPort) };
}

/** Linux's f_type of tmpfs and ramfs: memory, no fsync cost. */
const MEMORY_FS = new Set([0x01021994, 0x858458f6]);

/** Throws unless `dir` is on a file system that writes to a device (not tmpfs or ramfs). */
export function assertOnDisk(dir: string): void {
  const type = statfsSync(dir).type;
  if (MEMORY_FS.has(type)) {
    throw new Error(`${dir} is on tmpfs/ramfs (f_type 0x${type.toString(16)}): the ensemble workloads need a disk; point TMPDIR at one`);
  }
}

export async function ensembleTarget(ensemble: ZkEnsemble, storage: string): Promise<EnsembleTarget> {
  const leader = await ensemble.leader();
  const servers = ensemble.servers;
  const members = [...servers.filter((s) => s !== leader).map((s) => s.id), leader.id];
  return {
    kind: 'ensemble',
    ensemble,
    connectString: ensemble.connectString,
    storage,
    leaderId: leader.id,
    members,
    async counters() {
      const all = await Promise.all(servers.map((s) => readCounters(s.clientPort)));
      const state = await leader.fourLetter('mntr');
      if (!/zk_server_state\tleader/.test(state)) throw new Error(`server ${leader.id} is no longer the leader: the ensemble re-elected during the run`);
      const lead = all[servers.indexOf(leader)]!;
      const sum = (key: keyof Counters): number => all.reduce((acc, c) => acc + c[key], 0);
      return {
        requests: sum('requests'),
        reads: sum('reads'),
        writes: sum('writes'),
        notifications: sum('notifications'),
        watches: sum('watches'),
        packetsReceived: sum('packetsReceived'),
        znodes: lead.znodes,
        ephemerals: lead.ephemerals,
        proposals: lead.proposals,
        serverCpuMs: servers.reduce((acc, s) => acc + processCpuMs(s.pid), 0),
      };
    },
    async zxid() {
      return /Zxid: (0x[0-9a-f]+)/.exec(await leader.fourLetter('srvr'))?.[1] ?? 'unknown';
    },
  };
}

/** User + system CPU time of a process, ms, from /proc (clock ticks of 10 ms); 0 where there is no /proc. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    // The fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The myid of the member that created a session (a session id's top byte). */
export function memberOfSession(sessionId: string): number {
  return Number(BigInt(`0x${sessionId.replace(/^0x/, '')}`) >> 56n);
}

/** How many of `count` sessions each member takes: round-robin over the followers, then the leader. */
export function evenQuota(target: EnsembleTarget, count: number): Map<number, number> {
  const quota = new Map<number, number>(target.members.map((m) => [m, 0]));
  for (let i = 0; i < count; i++) {
    const member = target.members[i % target.members.length]!;
    quota.set(member, quota.get(member)! + 1);
  }
  return quota;
}

/** "3 on follower 1, 3 on follower 2, 2 on the leader (3)": where sessions sit. */
export function describeSpread(target: EnsembleTarget, placed: number[]): string {
  const parts = target.members.map((m) => {
    const n = placed.filter((p) => p === m).length;
    return m === target.leaderId ? `${n} on the leader (${m})` : `${n} on follower ${m}`;
  });
  return parts.join(', ');
}

/**
 * Starts one worker per label, each connecting with the ensemble's full connect string (rotated by
 * attempt: the raw client takes its hosts in order), and keeps it if its session landed on a member
 * that still has room in `quota`; the others are stopped and started again. After `maxTries`
 * attempts the rest are kept wherever they landed: the spread is reported as it was.
 */
export async function placedWorkers(
  ctx: BenchContext,
  target: EnsembleTarget,
  impl: Impl,
  labels: string[],
  quota: Map<number, number>,
  /** --quick keeps every session where it landed: a smoke check has no time for JVM restarts. */
  maxTries = ctx.quick ? 1 : 12,
): Promise<{ workers: LineWorker[]; members: number[] }> {
  const room = new Map(quota);
  const workers: (LineWorker | undefined)[] = labels.map(() => undefined);
  const members: number[] = labels.map(() => 0);
  const hosts = target.connectString.split(',');
  try {
    for (let attempt = 0; attempt < maxTries && workers.some((w) => !w); attempt++) {
      const pending = labels.map((_, i) => i).filter((i) => !workers[i]);
      const started = await Promise.all(
        pending.map(async (i) => {
          const k = (attempt + i) % hosts.length;
          const connect = [...hosts.slice(k), ...hosts.slice(0, k)].join(',');
          return { i, ...(await connectedWorkerSession(ctx, connect, impl, labels[i]!)) };
        }),
      );
      const last = attempt === maxTries - 1;
      const rejected: LineWorker[] = [];
      for (const { i, worker, sessionId } of started) {
        const member = memberOfSession(sessionId);
        if ((room.get(member) ?? 0) > 0 || last) {
          room.set(member, (room.get(member) ?? 0) - 1);
          workers[i] = worker;
          members[i] = member;
        } else rejected.push(worker);
      }
      await Promise.allSettled(rejected.map((w) => w.stop()));
    }
    return { workers: workers as LineWorker[], members };
  } catch (error) {
    await Promise.allSettled(workers.filter((w) => w !== undefined).map((w) => w.stop()));
    throw error;
  }
}

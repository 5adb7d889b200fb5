/**
 * The views' reading of a Curator or kazoo semaphore (lease-pool.ts has their layouts): every lease
 * node is a holder; the waiters are the contenders for the pool's guard lock, in its order (a
 * client adds its lease while it holds the guard, and only then lets the guard go).
 *
 * Curator adds a lease first and then counts (it does not store the permit count): while the pool
 * is full, the guard's holder has a lease node that waits. That lease is told by its session and
 * its zxid (the guard holder's, added after the guard): it counts as waiting, not holding. kazoo
 * adds a lease only when there is room, and stores the count in the pool's path.
 */
import { lockHoldersAt } from '../queue/lock-holders.js';
import { SEQUENCE_DIGITS } from '../queue/queue-entry.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import type { NodeData, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { LEASE_POOLS } from './lease-pool.js';
import { type LockInspection, nodeInfo } from './lock-inspection.js';

/** `none` (the lock's path and layout, nobody in it) filled in from the pool at that path. */
export async function inspectLeasePool(session: ZkSessionApi, none: LockInspection, children: readonly string[], signal?: AbortSignal): Promise<LockInspection> {
  const { path } = none;
  const pool = none.layout === 'kazoo' ? LEASE_POOLS.kazoo : LEASE_POOLS.curator;
  const leasesPath = pool.leasesPath(path);
  const guardPath = pool.guardPath(path);
  // kazoo counts every child of its path as a lease.
  const leaseNames = pool.sequential ? (await readChildren(session, leasesPath, signal)).children : children;
  const permits = pool.storesPermits ? storedPermits((await readNode(session, path, signal))?.data) : undefined;
  const guardQueue = lockHoldersAt(guardPath, (await readChildren(session, guardPath, signal)).children, none.layout).queue;
  // Curator's by sequence; kazoo's have none, and are shown by name.
  const sortKey = (name: string) => (pool.sequential ? name.slice(-SEQUENCE_DIGITS) : name);
  const leases = await readAll(session, leasesPath, [...leaseNames].sort((a, b) => sortKey(a).localeCompare(sortKey(b))), signal);
  const guard = await readAll(session, guardPath, guardQueue.map((entry) => entry.name), signal);
  // The guard's holder is still acquiring: a lease it added since it took the guard waits for room
  // (Curator adds it before counting); its guard node stands for it among the waiters.
  const acquiring = guard[0]?.node.stat;
  const waiting = (lease: NodeData) => acquiring !== undefined && lease.stat.ephemeralOwner === acquiring.ephemeralOwner && lease.stat.czxid > acquiring.czxid;
  const info = (sequential: boolean) => ({ name, node }: Read) => nodeInfo(name, 'semaphore', node, sequential ? Number(name.slice(-SEQUENCE_DIGITS)) : undefined, permits);
  const holders = leases.filter(({ node }) => !waiting(node)).map(info(pool.sequential));
  const waiters = guard.map(info(true));
  return holders.length + waiters.length === 0 ? none : { ...none, recipe: 'pool', holders, waiters };
}

interface Read {
  readonly name: string;
  readonly node: NodeData;
}

/** The nodes of `names` under `parent` that are still there, in that order. */
async function readAll(session: ZkSessionApi, parent: string, names: readonly string[], signal?: AbortSignal): Promise<Read[]> {
  const nodes = await Promise.all(names.map((name) => readNode(session, `${parent}/${name}`, signal)));
  return names.flatMap((name, i) => (nodes[i] ? [{ name, node: nodes[i] }] : []));
}

/** kazoo's max_leases, as it writes it (decimal text); undefined for anything else. */
function storedPermits(data: Buffer | undefined): number | undefined {
  const text = data?.toString() ?? '';
  return /^[1-9]\d*$/.test(text) ? Number(text) : undefined;
}

/**
 * The views' reading of a Curator or kazoo semaphore (lease-pool.ts has their layouts): every lease
 * node is a holder; the waiters are the contenders for the pool's guard lock, in its order (a
 * client adds its lease while it holds the guard, and only then lets the guard go).
 *
 * Curator adds a lease first and then counts, and does not store the permit count: while the pool
 * is full, the guard's holder has a lease node that waits, and it is listed among the holders.
 * kazoo adds a lease only when there is room, and stores the count in the pool's path.
 */
import { lockHoldersAt } from '../queue/lock-holders.js';
import { SEQUENCE_DIGITS } from '../queue/queue-entry.js';
import { readChildren, readNode } from '../zookeeper/session-retry.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { LEASE_POOLS } from './lease-pool.js';
import { type LockInspection, type LockNodeInfo, nodeInfo } from './lock-inspection.js';

/** `none` (the lock's path and layout, nobody in it) filled in from the pool at that path. */
export async function inspectLeasePool(session: ZkSessionApi, none: LockInspection, children: readonly string[], signal?: AbortSignal): Promise<LockInspection> {
  const { path } = none;
  const pool = none.layout === 'kazoo' ? LEASE_POOLS.kazoo : LEASE_POOLS.curator;
  const leasesPath = pool.leasesPath(path);
  // kazoo counts every child of its path as a lease.
  const leases = pool.sequential ? (await readChildren(session, leasesPath, signal)).children : children;
  const permits = pool.storesPermits ? storedPermits((await readNode(session, path, signal))?.data) : undefined;
  const guardPath = pool.guardPath(path);
  const guard = lockHoldersAt(guardPath, (await readChildren(session, guardPath, signal)).children, none.layout).queue;
  const read = async (parent: string, name: string, sequence?: number): Promise<LockNodeInfo | undefined> => {
    const node = await readNode(session, `${parent}/${name}`, signal);
    return node ? nodeInfo(name, 'semaphore', node, sequence, permits) : undefined;
  };
  // Curator's by sequence; kazoo's have none, and are shown by name.
  const sortKey = (name: string) => (pool.sequential ? name.slice(-SEQUENCE_DIGITS) : name);
  const bySequence = [...leases].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
  const holders = await Promise.all(bySequence.map((name) => read(leasesPath, name, pool.sequential ? Number(name.slice(-SEQUENCE_DIGITS)) : undefined)));
  const waiters = await Promise.all(guard.map((entry) => read(guardPath, entry.name, entry.sequence)));
  const present = (nodes: (LockNodeInfo | undefined)[]) => nodes.filter((node): node is LockNodeInfo => node !== undefined);
  const inspection = { ...none, holders: present(holders), waiters: present(waiters) };
  return inspection.holders.length + inspection.waiters.length === 0 ? none : { ...inspection, recipe: 'pool' };
}

/** kazoo's max_leases, as it writes it (decimal text); undefined for anything else. */
function storedPermits(data: Buffer | undefined): number | undefined {
  const text = data?.toString() ?? '';
  return /^[1-9]\d*$/.test(text) ? Number(text) : undefined;
}

/**
 * Asking the holders of a lock to release it, in any layout: the request is Curator's revocation,
 * `__REVOKE__` written into each holder's node (what `Revoker.attemptRevoke` does), so Curator
 * holders made revocable hear it as well as ours. Optionally, after a grace period, the nodes of
 * holders that did not release are deleted: the lock is taken from them (a revocable holder of this
 * library is told at once; others learn it when their session or their release says so).
 *
 * In our own layout the holders of plain exclusive and write locks grant the lock by writing their
 * node when they release, so a request is written only into revocable nodes (and reads and
 * semaphores, whose writes only wake a waiter to look again); the others can only be forced.
 */
import { InvalidOptionsError } from '../errors.js';
import { curatorMutexDriver, curatorReadDriver, kazooWriteDriver } from '../queue/foreign-drivers.js';
import { ENTRY_KIND, type QueueEntry, sortQueue } from '../queue/queue-entry.js';
import { WRITE_KINDS } from '../queue/lock-driver.js';
import type { LockLayout } from '../queue/layouts.js';
import { IncompatibleQueueError, ZkConnectionLossError, ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { readChildren, untilAnswered } from '../zookeeper/session-retry.js';
import { waitForChange } from '../zookeeper/wait-for-change.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { checkMs } from '../shared/durations.js';
import { holds } from './inspect.js';
import type { RecipeRuntime } from './recipe-runtime.js';
import { RELEASE_REQUEST } from './release-watch.js';

/** Options of LockService.requestRelease. */
export interface ReleaseRequestOptions {
  /**
   * After this many ms, delete the node of every holder that has not released: the lock is taken
   * from it. A revocable holder of this library learns it at once (its signal aborts, reason `revoked`).
   * @default undefined (only asked, never forced)
   */
  forceAfterMs?: number;
  /**
   * Stops waiting for the holders (nothing is forced then).
   * @default undefined (waits the whole forceAfterMs)
   */
  signal?: AbortSignal;
}

export interface ReleaseRequestResult {
  /** The lock's path. */
  readonly path: string;
  /** The holders' nodes the request was written into. */
  readonly requested: string[];
  /** Holders' nodes that could not be asked (our plain exclusive and write locks: not revocable). */
  readonly notAsked: string[];
  /** The nodes deleted after forceAfterMs (their holders lost the lock). */
  readonly forced: string[];
}

/** Asks whoever holds the lock at `path` (in `layout`) to release it; see the top of this file. */
export async function requestRelease(
  runtime: RecipeRuntime,
  path: string,
  layout: LockLayout,
  options: ReleaseRequestOptions = {},
): Promise<ReleaseRequestResult> {
  const forceAfterMs = checkMs(options.forceAfterMs, 'forceAfterMs', { max: Infinity });
  const stop = options.signal ?? new AbortController().signal;
  const session = await runtime.sessions.session(stop);
  const { children } = await readChildren(session, path, stop).catch((error: unknown) => {
    if (error instanceof ZkNoNodeError) return { children: [] as string[] };
    throw error;
  });
  let holders: { name: string; askable: boolean }[];
  try {
    holders = holdersOf(children, layout);
  } catch (error) {
    if (error instanceof IncompatibleQueueError) {
      throw new InvalidOptionsError('layout', `'${layout}' does not match the lock at ${path}: ${error.detail}; ask with the layout of its nodes (the CLI's --layout)`);
    }
    throw error;
  }
  const requested: string[] = [];
  const notAsked: string[] = [];
  await Promise.all(
    holders.map(async ({ name, askable }) => {
      const node = `${path}/${name}`;
      if (!askable) return notAsked.push(node);
      if (await ask(session, node, stop)) requested.push(node);
    }),
  );
  const forced: string[] = [];
  if (forceAfterMs !== undefined) {
    const grace = AbortSignal.any([stop, AbortSignal.timeout(Math.min(forceAfterMs, 2_147_483_647))]);
    const remaining = await stillThere(session, [...requested, ...notAsked], grace);
    stop.throwIfAborted();
    for (const node of remaining) if (await remove(session, node, stop)) forced.push(node);
  }
  return { path, requested: requested.sort(), notAsked: notAsked.sort(), forced: forced.sort() };
}

/** Who holds, by the layout's rules; `askable`: a request may be written into the node. */
function holdersOf(children: readonly string[], layout: LockLayout): { name: string; askable: boolean }[] {
  if (layout === 'nestjs-zk-lock') {
    const queue = sortQueue(children, true);
    const holders = queue.filter((entry, i) => holds(queue, i, entry));
    // A downgraded write still at the head holds with its read: ask it too (same session, below the read).
    for (const read of holders.filter((entry) => entry.kind === ENTRY_KIND.downgradeRead)) {
      const write = queue.find((entry) => entry.sessionId === read.sessionId && entry.sequence < read.sequence && WRITE_KINDS.has(entry.kind));
      if (write && !holders.includes(write)) holders.push(write);
    }
    return holders.map((entry) => ({ name: entry.name, askable: entry.kind !== ENTRY_KIND.exclusive && entry.kind !== ENTRY_KIND.write }));
  }
  if (children.some((name) => name === 'leases' || /^[0-9a-f]{32}$/.test(name))) {
    throw new InvalidOptionsError(
      'target',
      `is a semaphore's lease pool (Curator's InterProcessSemaphoreV2 or kazoo's Semaphore): release requests are for locks; leases can only be released by their holders`,
    );
  }
  if (layout === 'kazoo') return kazooHolders(kazooWriteDriver.order(children)).map((entry) => ({ name: entry.name, askable: true }));
  const readWrite = children.some((name) => name.includes('__READ__') || name.includes('__WRIT__'));
  const queue = readWrite ? curatorReadDriver.order(children) : curatorMutexDriver.order(children);
  return readersAndFirstWriter(queue, readWrite).map((entry) => ({ name: entry.name, askable: true }));
}

/** Curator: the mutex's first node; or the readers before the first writer, or the first node when it is a writer. */
function readersAndFirstWriter(queue: readonly QueueEntry[], readWrite: boolean): QueueEntry[] {
  if (!readWrite) return queue.slice(0, 1);
  const firstWrite = queue.findIndex((entry) => entry.kind === ENTRY_KIND.write);
  const holders =
    firstWrite === 0 ? [queue[0]!] : queue.slice(0, firstWrite < 0 ? queue.length : firstWrite).filter((entry) => entry.kind === ENTRY_KIND.read);
  // A downgrade read carries its write's sequence: the two hold together, whichever sorts first.
  const sequences = new Set(holders.map((entry) => entry.name.slice(-10)));
  return queue.filter((entry) => holders.includes(entry) || (entry.kind !== ENTRY_KIND.exclusive && sequences.has(entry.name.slice(-10))));
}

/**
 * kazoo: the readers before the first `__lock__` node, and that node (a `Lock` holds there even
 * behind readers; a `WriteLock` would wait, and a request written into a waiter only wakes its watcher).
 */
function kazooHolders(queue: readonly QueueEntry[]): QueueEntry[] {
  const firstLock = queue.findIndex((entry) => entry.kind === ENTRY_KIND.write);
  return firstLock < 0 ? [...queue] : queue.slice(0, firstLock + 1);
}

/** Writes the request; false when the node is gone already. */
async function ask(session: ZkSessionApi, node: string, stop: AbortSignal): Promise<boolean> {
  try {
    await untilAnswered(session, stop, () => session.setData(node, RELEASE_REQUEST));
    return true;
  } catch (error) {
    if (error instanceof ZkNoNodeError) return false;
    throw error;
  }
}

/**
 * Waits until every node is gone or `grace` aborts; returns the nodes still there. A node that
 * cannot be read (other than gone) is waited on to the end of the grace, never polled.
 * @throws ZkSessionLostError when the session ends meanwhile.
 */
async function stillThere(session: ZkSessionApi, nodes: readonly string[], grace: AbortSignal): Promise<string[]> {
  const left = new Set(nodes);
  const graceOver = new Promise<void>((resolve) => {
    if (grace.aborted) resolve();
    else grace.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.all(
    nodes.map(async (node) => {
      while (!grace.aborted) {
        try {
          await session.getData(node);
          await waitForChange(session, [node], grace);
        } catch (error) {
          if (error instanceof ZkNoNodeError) return left.delete(node);
          if (error instanceof ZkSessionLostError) throw error;
          if (grace.aborted) return undefined;
          if (!(error instanceof ZkConnectionLossError)) return graceOver; // e.g. NoAuth: wait out the grace
          const connected = session.whenConnected(grace).catch((e: unknown) => {
            if (e instanceof ZkSessionLostError) throw e;
          });
          await Promise.race([connected, graceOver]);
        }
      }
      return undefined;
    }),
  );
  return [...left];
}

async function remove(session: ZkSessionApi, node: string, stop: AbortSignal): Promise<boolean> {
  try {
    await untilAnswered(session, stop, () => session.delete(node));
    return true;
  } catch (error) {
    if (error instanceof ZkNoNodeError) return false;
    throw error;
  }
}

/** Checks the target of a request: a resource (its path under rootPath) or an exact zkPath. */
export function releaseTarget(target: unknown): { resource: string | undefined; zkPath: string | undefined; layout: unknown } {
  if (typeof target === 'string') return { resource: target, zkPath: undefined, layout: undefined };
  if (target === null || typeof target !== 'object') {
    throw new InvalidOptionsError('target', 'must be a resource name or { zkPath, layout } (or { resource, layout })');
  }
  const { resource, zkPath, layout } = target as { resource?: unknown; zkPath?: unknown; layout?: unknown };
  if (resource === undefined && zkPath === undefined) throw new InvalidOptionsError('target', 'needs a resource or a zkPath');
  if (resource !== undefined && typeof resource !== 'string') throw new InvalidOptionsError('target.resource', 'must be a string');
  return { resource: resource as string | undefined, zkPath: zkPath as string | undefined, layout };
}

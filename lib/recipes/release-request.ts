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
import { ENTRY_KIND, type QueueEntry } from '../queue/queue-entry.js';
import { lockHoldersAt } from '../queue/lock-holders.js';
import { leasePoolOf, type LockLayout } from '../queue/layouts.js';
import { ZkConnectionLossError, ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { untilAnswered } from '../zookeeper/session-lifecycle.js';
import { readChildren } from '../zookeeper/session-retry.js';
import { waitForChange } from '../zookeeper/wait-for-change.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { checkMs } from '../shared/durations.js';
import type { RecipeRuntime } from './recipe-runtime.js';
import { RELEASE_REQUEST } from './release-watch.js';

/** Options of LockService.requestRelease. */
export interface ReleaseRequestOptions {
  /**
   * After this many ms, delete the node of every holder that has not released: the lock is taken
   * from it. A revocable holder of this library learns it at once (its signal aborts, reason `deleted`).
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
  const holders = holdersOf(path, children, layout);
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

/** Who holds, by the layout's rules (lock-holders.ts); `askable`: a request may be written into the node. */
function holdersOf(path: string, children: readonly string[], layout: LockLayout): { name: string; askable: boolean }[] {
  if (layout !== 'nestjs-zk-lock' && leasePoolOf(children)) {
    throw new InvalidOptionsError(
      'target',
      `is a semaphore's lease pool (Curator's InterProcessSemaphoreV2 or kazoo's Semaphore): release requests are for locks; leases can only be released by their holders`,
    );
  }
  // Our plain exclusive and write holders grant the lock by writing their node: never write into it.
  const askable = (entry: QueueEntry) => layout !== 'nestjs-zk-lock' || (entry.kind !== ENTRY_KIND.exclusive && entry.kind !== ENTRY_KIND.write);
  const { holders, mayHold } = lockHoldersAt(path, children, layout);
  if (holders.some((entry) => entry.kind === ENTRY_KIND.election)) {
    // A write to a LeaderLatch node uses up Curator's one-shot watch on it, and the latch after it stalls.
    throw new InvalidOptionsError('target', `is a leader election (${path}): release requests are for locks; the leader gives leadership up with Election.resign()`);
  }
  return [...holders, ...mayHold].map((entry) => ({ name: entry.name, askable: askable(entry) }));
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

import { InvalidOptionsError, shown } from '../errors.js';
import { decodeResource, encodeResource } from '../zookeeper/paths.js';
import { type LockInspection, inspectLock } from './inspect.js';
import type { RecipeRuntime } from './recipe-runtime.js';
import { readChildren } from '../zookeeper/session-retry.js';

/** Every lock under rootPath at one moment (a snapshot of a few reads, not one atomic view). */
export interface LockOverview {
  /** The root path that was listed. */
  readonly rootPath: string;
  /**
   * When the listing was read, by this process's clock. Wait times are this minus a node's
   * `createdAt` (ZooKeeper's clock): see {@link ageOf}.
   */
  readonly readAt: Date;
  /** Locks with at least one holder or waiter, sorted by resource name. */
  readonly locks: LockInspection[];
}

/** Options of inspectAll (LockService.inspectAll and the live view). */
export interface InspectAllOptions {
  /**
   * Aborting it stops the walk: the call rejects with the abort reason.
   * @default undefined (the walk runs to the end)
   */
  signal?: AbortSignal;
  /**
   * How many resources are inspected at once (each costs two or three reads).
   * @default 8
   */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 8;

/**
 * Lists rootPath and inspects every resource under it. Read-only: a missing rootPath is an empty
 * overview, never created. A resource whose lock ends between the listing and its own read, and a
 * child that is not an encoded resource name (someone else's node), are left out.
 */
export async function inspectAll(runtime: RecipeRuntime, options: InspectAllOptions = {}): Promise<LockOverview> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InvalidOptionsError('concurrency', `must be a positive integer, got ${shown(concurrency)}`);
  }
  const { signal } = options;
  const session = await runtime.sessions.session(signal);
  const { children } = await readChildren(session, runtime.rootPath, signal);
  const resources = children.map(resourceOf).filter((name): name is string => name !== undefined);
  const found: LockInspection[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < resources.length) {
      signal?.throwIfAborted();
      const inspection = await inspectLock(runtime, resources[next++]!, signal);
      if (inspection.recipe !== 'none') found.push(inspection);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, resources.length) }, worker));
  const readAt = new Date();
  found.sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  return { rootPath: runtime.rootPath, readAt, locks: found };
}

/**
 * The resource name a child of rootPath stands for, or undefined when the name is not one
 * encodeResource produces (so inspecting it would read a different node).
 */
export function resourceOf(component: string): string | undefined {
  let resource: string;
  try {
    resource = decodeResource(component);
    return encodeResource(resource) === component ? resource : undefined;
  } catch {
    return undefined; // malformed percent-encoding or an unencodable name: not one of ours
  }
}

/**
 * How long ago a node was created, in ms, as of `readAt`: `readAt` is the reader's clock and
 * `createdAt` ZooKeeper's, so a skew between the two shifts every age by the same amount. Never
 * negative (a server clock ahead of ours shows 0); undefined without a creation time.
 */
export function ageOf(createdAt: Date | undefined, readAt: Date): number | undefined {
  if (!createdAt) return undefined;
  return Math.max(0, readAt.getTime() - createdAt.getTime());
}

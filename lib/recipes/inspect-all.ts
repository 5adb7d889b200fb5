import { InvalidOptionsError, shown } from '../errors.js';
import { decodeResource, encodeResource } from '../zookeeper/paths.js';
import { inspectLock } from './inspect.js';
import { checkTargets, compare, inParallel, inspectElsewhere, type LockAtPath, type LockScan } from './inspect-elsewhere.js';
import type { LockInspection } from './lock-inspection.js';
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
  /**
   * Locks with at least one holder or waiter: those under rootPath sorted by resource, then those
   * of `paths` and `scan` sorted by path (their resource is their path).
   */
  readonly locks: LockInspection[];
  /** Paths of `paths` and `scan` that could not be read by their layout's rules (nodes of two layouts), and why. */
  readonly unreadable?: { readonly path: string; readonly reason: string }[];
}

/** Options of inspectAll (LockService.inspectAll and the live view). */
export interface InspectAllOptions {
  /**
   * Aborting it stops the walk: the call rejects with the abort reason.
   * @default undefined (the walk runs to the end)
   */
  signal?: AbortSignal;
  /**
   * How many locks are inspected at once (each costs two or three reads).
   * @default 8
   */
  concurrency?: number;
  /**
   * Locks at exact paths outside rootPath, shared with Curator or kazoo services, each read by its
   * layout's rules (those of `requestRelease`); a path without a `layout` is read by the layout its
   * nodes' names show.
   * @default [] (only rootPath)
   */
  paths?: readonly LockAtPath[];
  /**
   * Paths whose children are locks of other services: each child's layout (Curator's mutex,
   * read/write lock or semaphore; kazoo's locks or semaphore; ours) is told by its nodes' names.
   * @default [] (only rootPath)
   */
  scan?: readonly LockScan[];
}

const DEFAULT_CONCURRENCY = 8;

/**
 * Lists rootPath and inspects every resource under it, then the locks of `paths` and `scan`.
 * Read-only: a missing path is no locks, never created. A lock that ends between the listing and
 * its own read, and a child of rootPath that is not an encoded resource name (someone else's
 * node), are left out.
 */
export async function inspectAll(runtime: RecipeRuntime, options: InspectAllOptions = {}): Promise<LockOverview> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InvalidOptionsError('concurrency', `must be a positive integer, got ${shown(concurrency)}`);
  }
  const targets = checkTargets(options, runtime);
  const { signal } = options;
  const session = await runtime.sessions.session(signal);
  const { children } = await readChildren(session, runtime.rootPath, signal);
  const resources = children.map(resourceOf).filter((name): name is string => name !== undefined);
  const own: LockInspection[] = [];
  await inParallel(resources, concurrency, signal, async (resource) => {
    const inspection = await inspectLock(runtime, resource, { signal });
    if (inspection.recipe !== 'none') own.push(inspection);
  });
  const elsewhere = await inspectElsewhere(runtime, targets, concurrency, signal);
  const readAt = new Date();
  own.sort((a, b) => compare(a.resource, b.resource));
  return {
    rootPath: runtime.rootPath,
    readAt,
    locks: [...own, ...elsewhere.locks],
    ...(elsewhere.unreadable.length > 0 ? { unreadable: elsewhere.unreadable } : {}),
  };
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

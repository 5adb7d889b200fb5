/**
 * The views' locks outside rootPath: locks at paths a user names (`paths`), and the children of
 * paths a user asks to scan (`scan`), each read by the rules of its layout. A lock's layout, when
 * not given, is the one its nodes' names show (layouts.ts `detectLayout`).
 */
import { InvalidOptionsError, InvalidResourceNameError, shown } from '../errors.js';
import { type DetectedLayout, detectLayout, layoutOfStyle, type LockLayout, styleAdvice, validateLayout } from '../queue/layouts.js';
import { readChildren } from '../zookeeper/session-retry.js';
import { validateZkPath } from '../zookeeper/paths.js';
import { inspectLock } from './inspect.js';
import type { LockInspection } from './lock-inspection.js';
import type { RecipeRuntime } from './recipe-runtime.js';

/** A lock of `paths`: its exact path and whose rules its nodes follow. */
export interface LockAtPath {
  /** The lock's exact path, outside rootPath. */
  readonly zkPath: string;
  /** Whose nodes are under it: Curator's, kazoo's, or ours at a zkPath; undefined: told by their names. */
  readonly layout?: LockLayout;
}

/** A `scan` root: every child of it is a lock path, its layout told by its nodes' names. */
export interface LockScan {
  /** The path whose children are lock paths (one level down), outside rootPath. */
  readonly root: string;
  /** Only locks of this layout; undefined: every layout found. */
  readonly layout?: LockLayout;
}

/** `paths` and `scan`, checked. */
export interface LockTargets {
  readonly paths: readonly LockAtPath[];
  readonly scan: readonly LockScan[];
}

/**
 * Checks `paths` and `scan` before anything is read; with `runtime`, also that each is outside its
 * rootPath (whose locks are listed anyway).
 * @throws InvalidOptionsError, or InvalidResourceNameError for a bad zkPath.
 */
export function checkTargets(options: { paths?: unknown; scan?: unknown }, runtime?: RecipeRuntime): LockTargets {
  const outside = (path: string) => (runtime ? runtime.pathFor(path, path) : validateZkPath(path));
  const paths = listOf(options.paths, 'paths', '{ zkPath, layout }').map((item, i): LockAtPath => {
    const { zkPath, layout } = item as { zkPath?: unknown; layout?: unknown };
    if (typeof zkPath !== 'string') throw new InvalidOptionsError(`paths[${i}].zkPath`, `must be the lock's absolute path, got ${shown(zkPath)}`);
    return { zkPath: outside(zkPath), layout: validateLayout(layout, `paths[${i}].layout`) };
  });
  const scan = listOf(options.scan, 'scan', '{ root, layout }').map((item, i): LockScan => {
    const { root, layout } = item as { root?: unknown; layout?: unknown };
    if (typeof root !== 'string') throw new InvalidOptionsError(`scan[${i}].root`, `must be an absolute path whose children are locks, got ${shown(root)}`);
    try {
      validateZkPath(root);
    } catch (error) {
      if (!(error instanceof InvalidResourceNameError)) throw error;
      throw new InvalidOptionsError(`scan[${i}].root`, error.reason.replace(/^zkPath /, ''));
    }
    if (runtime?.isUnderRoot(root)) {
      throw new InvalidOptionsError(`scan[${i}].root`, `is at or under rootPath (${runtime.rootPath}), whose locks are listed anyway: give a root outside it`);
    }
    return { root, layout: validateLayout(layout, `scan[${i}].layout`) };
  });
  return { paths, scan };
}

function listOf(value: unknown, option: string, shape: string): object[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => item === null || typeof item !== 'object')) {
    throw new InvalidOptionsError(option, `must be an array of ${shape}, got ${shown(value)}`);
  }
  return value as object[];
}

/** One path to read: its layout when given, else told by its nodes (and kept only if it is `only`). */
interface Candidate {
  readonly path: string;
  readonly layout: LockLayout | undefined;
  readonly only: LockLayout | undefined;
}

/**
 * Reads the locks of `targets`, each path once. A path whose nodes do not follow its layout (two
 * layouts on one lock: both sides would hold) is listed in `unreadable` with the reason.
 */
export async function inspectElsewhere(
  runtime: RecipeRuntime,
  targets: LockTargets,
  concurrency: number,
  signal: AbortSignal | undefined,
): Promise<{ locks: LockInspection[]; unreadable: { path: string; reason: string }[] }> {
  const candidates = new Map<string, Candidate>();
  for (const { zkPath, layout } of targets.paths) if (!candidates.has(zkPath)) candidates.set(zkPath, { path: zkPath, layout, only: undefined });
  const session = await runtime.sessions.session(signal);
  for (const { root, layout } of targets.scan) {
    const { children } = await readChildren(session, root, signal);
    for (const name of children) {
      const path = `${root}/${name}`;
      // kazoo keeps a semaphore's guard lock beside it (`<path>-__lock__`): shown as the pool's waiters.
      if (name.endsWith(KAZOO_GUARD) && children.includes(name.slice(0, -KAZOO_GUARD.length))) continue;
      if (!candidates.has(path)) candidates.set(path, { path, layout: undefined, only: layout });
    }
  }
  const locks: LockInspection[] = [];
  const unreadable: { path: string; reason: string }[] = [];
  await inParallel([...candidates.values()], concurrency, signal, async ({ path, layout, only }) => {
    const detected = layout === undefined ? detectLayout((await readChildren(session, path, signal)).children) : { layout, pool: false };
    if (detected === undefined || (only !== undefined && !layoutsOf(detected).includes(only))) return;
    if (detected.mixed) {
      const found = detected.mixed.map(styleAdvice).join(' and ');
      return void unreadable.push({ path, reason: `it holds nodes of ${found}, which do not exclude each other (both can hold at once): give every client of the path the same layout` });
    }
    try {
      const inspection = await inspectLock(runtime, path, { zkPath: path, layout: detected.layout, signal });
      if (inspection.recipe !== 'none') locks.push(inspection);
    } catch (error) {
      if (!(error instanceof InvalidOptionsError) || error.option !== 'layout') throw error;
      unreadable.push({ path, reason: error.message });
    }
  });
  locks.sort((a, b) => compare(a.path, b.path));
  unreadable.sort((a, b) => compare(a.path, b.path));
  return { locks, unreadable };
}

const KAZOO_GUARD = '-__lock__';

/** Every layout whose nodes a detected path holds. */
function layoutsOf(detected: DetectedLayout): LockLayout[] {
  return detected.mixed ? detected.mixed.map(layoutOfStyle) : [detected.layout];
}

/** Runs `task` on every item, at most `concurrency` at once; stops starting new ones once `signal` aborts. */
export async function inParallel<T>(items: readonly T[], concurrency: number, signal: AbortSignal | undefined, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      signal?.throwIfAborted();
      await task(items[next++]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

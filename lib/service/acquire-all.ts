import { InvalidOptionsError, LockTimeoutError } from '../errors.js';
import { type AcquireOptions, type LockRequest, type LockTarget, validateLockContext, validateWaitTimeout } from '../context/lock-request.js';
import { currentLockContext, runOutsideLockContext } from '../context/lock-context.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import type { RecipeRuntime } from '../recipes/recipe-runtime.js';
import { type LockAcquirer, withOwner } from './lock-acquirer.js';

/**
 * LockService.acquireAll: several locks, all or nothing, in one canonical order (sorted by their
 * ZooKeeper paths), so that callers asking for {a, b} and {b, a} cannot deadlock. `waitTimeoutMs`
 * bounds the whole call; on any failure the locks taken are released. One target (a decorated
 * method's one resource) has no order to keep: its lock is taken as `acquire` takes it.
 */
export function acquireAll(acquirer: LockAcquirer, runtime: RecipeRuntime, targets: readonly LockTarget[], options: AcquireOptions): Promise<LockHandle[]> {
  try {
    const policy = options.lockContext === undefined ? 'join' : validateLockContext(options.lockContext);
    if (options.zkPath !== undefined) {
      throw new InvalidOptionsError('zkPath', 'acquireAll takes each lock\'s zkPath in its target ({ resource, zkPath }), not in the options of all');
    }
    const taking = targets.length === 1 ? acquireOne : acquireAllIn;
    if (policy === 'join') return taking(acquirer, runtime, targets, options, undefined);
    const owner = currentLockContext()?.owner;
    return runOutsideLockContext(() => taking(acquirer, runtime, targets, options, owner));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/**
 * One target: its request checked as each of several is (a name or zkPath that cannot be a lock
 * fails before anything is requested), then taken once, with the whole waitTimeoutMs.
 */
async function acquireOne(
  acquirer: LockAcquirer,
  runtime: RecipeRuntime,
  targets: readonly LockTarget[],
  options: AcquireOptions,
  owner: string | undefined,
): Promise<LockHandle[]> {
  const { request } = checkTarget(acquirer, runtime, targets[0]!, options);
  try {
    return [(await acquirer.take(withOwner(request, owner), false))!];
  } catch (error) {
    // As for several, the error names the caller's waitTimeoutMs: also a `waitTimeoutMs: 0` that waited for a session (bounded by connectTimeoutMs).
    if (error instanceof LockTimeoutError && request.waitTimeoutMs !== undefined) throw new LockTimeoutError(error.resource, request.waitTimeoutMs);
    throw error;
  }
}

async function acquireAllIn(
  acquirer: LockAcquirer,
  runtime: RecipeRuntime,
  targets: readonly LockTarget[],
  options: AcquireOptions,
  owner: string | undefined,
): Promise<LockHandle[]> {
  const requests = canonicalOrder(acquirer, runtime, targets, options).map((request) => withOwner(request, owner));
  const waitTimeoutMs = validateWaitTimeout(options.waitTimeoutMs, 'waitTimeoutMs') ?? acquirer.defaults.waitTimeoutMs;
  const deadline = waitTimeoutMs === undefined ? undefined : performance.now() + waitTimeoutMs;
  const handles: LockHandle[] = [];
  try {
    for (const request of requests) {
      const left = deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
      handles.push((await acquirer.take({ ...request, waitTimeoutMs: left }, false))!);
    }
    return handles;
  } catch (error) {
    await Promise.allSettled(handles.reverse().map((handle) => handle.release()));
    // Each lock waited for what was left of the budget; the caller set the whole of it.
    if (error instanceof LockTimeoutError && waitTimeoutMs !== undefined) throw new LockTimeoutError(error.resource, waitTimeoutMs);
    throw error;
  }
}

/**
 * The targets checked, each lock once, sorted by their ZooKeeper paths: every process orders the
 * same locks alike, however it names them (a resource, or the zkPath of the same node).
 */
function canonicalOrder(acquirer: LockAcquirer, runtime: RecipeRuntime, targets: readonly LockTarget[], options: AcquireOptions): LockRequest[] {
  const byLock = new Map<string, { request: LockRequest; path: string }>();
  for (const target of targets) {
    const checked = checkTarget(acquirer, runtime, target, options);
    const { request } = checked;
    const seen = byLock.get(request.lockId);
    if (seen && (seen.request.slot !== request.slot || seen.request.kind.permits !== request.kind.permits)) {
      throw new InvalidOptionsError('resources', `"${request.resource}" is asked for twice, with different modes or permits`);
    }
    byLock.set(request.lockId, checked);
  }
  return [...byLock.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map(({ request }) => request);
}

/** A target's request, its kind defaulting to the options', and its lock's path (which refuses a name or zkPath that cannot be a lock). */
function checkTarget(acquirer: LockAcquirer, runtime: RecipeRuntime, target: LockTarget, options: AcquireOptions): { request: LockRequest; path: string } {
  const { resource, ...kind } = typeof target === 'string' ? { resource: target } : target;
  const request = acquirer.check(
    resource,
    { mode: kind.mode ?? options.mode, permits: kind.permits ?? options.permits, layout: kind.layout ?? options.layout, zkPath: kind.zkPath },
    options,
  );
  return { request, path: runtime.pathFor(resource, request.zkPath) };
}

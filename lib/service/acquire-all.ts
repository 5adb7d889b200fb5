import { InvalidOptionsError, LockTimeoutError } from '../errors.js';
import { type AcquireOptions, type LockRequest, type LockTarget, validateLockContext, validateWaitTimeout } from '../context/lock-request.js';
import { currentLockContext, runOutsideLockContext } from '../context/lock-context.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import type { RecipeRuntime } from '../recipes/recipe-runtime.js';
import { type LockAcquirer, withOwner } from './lock-acquirer.js';

/**
 * LockService.acquireAll: several locks, all or nothing, in one canonical order (sorted by their
 * ZooKeeper paths), so that callers asking for {a, b} and {b, a} cannot deadlock. `waitTimeoutMs`
 * bounds the whole call; on any failure the locks taken are released.
 */
export function acquireAll(acquirer: LockAcquirer, runtime: RecipeRuntime, targets: readonly LockTarget[], options: AcquireOptions): Promise<LockHandle[]> {
  try {
    const policy = validateLockContext(options.lockContext);
    if (policy === 'join') return acquireAllIn(acquirer, runtime, targets, options, undefined);
    const owner = currentLockContext()?.owner;
    return runOutsideLockContext(() => acquireAllIn(acquirer, runtime, targets, options, owner));
  } catch (error) {
    return Promise.reject(error as Error);
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
  if (options.zkPath !== undefined) {
    throw new InvalidOptionsError('zkPath', 'acquireAll takes each lock\'s zkPath in its target ({ resource, zkPath }), not in the options of all');
  }
  const byLock = new Map<string, { request: LockRequest; path: string }>();
  for (const target of targets) {
    const { resource, ...kind } = typeof target === 'string' ? { resource: target } : target;
    const request = acquirer.check(
      resource,
      { mode: kind.mode ?? options.mode, permits: kind.permits ?? options.permits, layout: kind.layout ?? options.layout, zkPath: kind.zkPath },
      options,
    );
    const seen = byLock.get(request.lockId);
    if (seen && (seen.request.slot !== request.slot || seen.request.kind.permits !== request.kind.permits)) {
      throw new InvalidOptionsError('resources', `"${resource}" is asked for twice, with different modes or permits`);
    }
    byLock.set(request.lockId, { request, path: runtime.pathFor(resource, request.zkPath) });
  }
  return [...byLock.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map(({ request }) => request);
}

import { currentLockContext, type ReentrantLocks } from '../context/lock-context.js';
import { leadershipInScope } from '../context/leadership-scope.js';
import type { LockPlacement } from '../context/lock-request.js';
import { type LockLayout, validateLayout } from '../queue/layouts.js';
import type { HeldLock } from '../recipes/lock-handle.js';
import { validateZkPath } from '../zookeeper/paths.js';
import type { ElectionRegistry } from './election-registry.js';
import { lockIdOf } from './lock-acquirer.js';

/**
 * LockService.heldLock: the lock the current context holds on `resource` (by its lock id, then by
 * its label), else the leadership of a group of that name (the term a `@Leader` call runs under,
 * then the current term while this instance leads).
 */
export function findHeldLock(
  locks: ReentrantLocks,
  elections: ElectionRegistry,
  defaultLayout: LockLayout,
  resource: string,
  placement: LockPlacement,
): HeldLock | undefined {
  const layout = validateLayout(placement.layout) ?? defaultLayout;
  const zkPath = placement.zkPath === undefined ? undefined : validateZkPath(placement.zkPath);
  const context = currentLockContext();
  return (
    locks.held(context, lockIdOf(resource, layout, zkPath)) ??
    locks.heldByLabel(context, resource, zkPath) ??
    leadershipInScope(resource) ??
    elections.leadership(resource)
  );
}

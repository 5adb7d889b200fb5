import type { HeldLock } from '../recipes/lock-handle.js';
import type { LockService } from '../service/lock.service.js';
import type { MethodSchedule } from './scheduled-method.js';

/** What the claim of a call's tick found: run it, it already ran, or the hold ended during the claim. */
export type TickClaimOutcome = 'claimed' | 'ran-this-tick' | 'lost';

/**
 * The once-per-tick step of @DistributedLock and @Leader: a call names its tick when it starts
 * (`schedule.tick()`, before any wait), then, holding `held` (the lock, or the term), claims it in
 * the record of `resource` and `job`: one claimant per tick across the cluster. A claim that the
 * hold's loss stopped is `'lost'`: the caller answers it (a lock's LockLostError, a leader's skip).
 */
export async function claimTickHolding(
  service: LockService,
  resource: string,
  job: string,
  tick: ReturnType<MethodSchedule['tick']>,
  held: HeldLock,
): Promise<TickClaimOutcome> {
  const { signal } = held;
  try {
    const { claimed } = await service.claimTick(resource, { job, ...tick }, { signal });
    return claimed ? 'claimed' : 'ran-this-tick';
  } catch (error) {
    if (signal.aborted) return 'lost';
    throw error;
  }
}

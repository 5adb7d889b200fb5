import { finished, Readable } from 'node:stream';
import { Logger, StreamableFile } from '@nestjs/common';
import { isObservable, finalize, type Observable } from 'rxjs';
import { InvalidOptionsError, InvalidResourceNameError, LockLostError, LockServiceClosedError, LockTimeoutError } from '../errors.js';
import type { DistributedLockSpec } from './distributed-lock.options.js';
import { runByLockContextPolicy } from '../context/lock-context.js';
import type { LockHandle } from '../recipes/lock-handle.js';
import { type LockTarget, ownerLabel } from '../context/lock-request.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { tickScheduleOf } from './scheduled-method.js';
import { claimTickHolding, type TickClaimOutcome } from './once-per-tick.js';

const logger = new Logger('ZkLock');

/**
 * Runs one call of a @DistributedLock method: in the caller's lock context (or a fresh one; always
 * a fresh one with `lockContext: 'new'`), takes the lock(s), calls the method, and releases when its
 * result settles.
 */
export function runGuarded(instance: object, spec: DistributedLockSpec, args: unknown[], call: () => unknown): Promise<unknown> {
  return runByLockContextPolicy(spec.options.lockContext ?? 'join', async () => {
    const service = lockServiceRegistry.serviceFor(instance, spec.method);
    const resources = resourcesOf(spec, args);
    const { mode, permits, layout, onBusy, holdAtLeastMs, onReleaseRequest } = spec.options;
    const skipWhenBusy = onBusy === 'skip';
    const waitTimeoutMs = spec.options.waitTimeoutMs ?? (skipWhenBusy ? 0 : undefined);
    // Named when the call starts (a cron tick by the fire time that follows now), not after a wait.
    const tick = tickScheduleOf(spec)?.tick();
    let handles: LockHandle[];
    try {
      const zkPath = zkPathOf(spec, args, resources);
      const targets: LockTarget[] = [];
      for (const resource of resources) targets.push({ resource, mode, permits, layout, zkPath });
      // One resource: taken as `acquire` does, after `acquireAll`'s checks (the name before anything is
      // requested; a timeout names waitTimeoutMs, also 0): service/acquire-all.ts.
      handles = await service.acquireAll(targets, { waitTimeoutMs, onReleaseRequest, holdAtLeastMs });
    } catch (error) {
      // Busy, or the application is stopping: a run that may be skipped is skipped.
      if (skipWhenBusy && error instanceof LockTimeoutError) service.reportSkipped(error.resource, 'busy', { mode, permits });
      if (skipWhenBusy && (error instanceof LockTimeoutError || error instanceof LockServiceClosedError)) return undefined;
      throw error;
    }
    const release = releaseOnce(handles, spec);
    if (tick) {
      // The record is named after the first resource; the lock makes the claim and the run one step.
      let outcome: TickClaimOutcome;
      try {
        outcome = await claimTickHolding(service, resources[0]!, spec.method, tick, handles[0]!);
      } catch (error) {
        await release();
        throw error;
      }
      if (outcome !== 'claimed') {
        await release();
        if (outcome === 'lost') throw handles[0]!.signal.reason; // the lock lost under the claim: its LockLostError says why
        service.reportSkipped(resources[0]!, 'ran-this-tick', { mode, permits });
        return undefined;
      }
    }
    let result: unknown;
    try {
      result = call();
    } catch (error) {
      await release();
      throw error; // the method's own error, untouched
    }
    return holdUntilDone(result, release);
  }, () => ownerLabel(spec.method));
}

function resourcesOf(spec: DistributedLockSpec, args: unknown[]): readonly string[] {
  if (typeof spec.resource === 'string') return [spec.resource];
  const named = spec.resource(...args);
  const list = typeof named === 'string' ? [named] : named;
  if (!Array.isArray(list) || list.length === 0 || list.some((r) => typeof r !== 'string')) {
    throw new InvalidResourceNameError(named, `the resource function of ${spec.method} must return a string or a non-empty array of strings`);
  }
  return list;
}

/** The lock's exact path for this call, when the decorator gives one: only for a single resource. */
function zkPathOf(spec: DistributedLockSpec, args: unknown[], resources: readonly string[]): string | undefined {
  const { zkPath } = spec.options;
  if (zkPath === undefined) return undefined;
  if (resources.length !== 1) {
    throw new InvalidOptionsError('@DistributedLock zkPath', `${spec.method} locks ${resources.length} resources; a zkPath names one lock`);
  }
  return typeof zkPath === 'string' ? zkPath : zkPath(...args);
}

/**
 * Keeps the locks until the result is done: a promise or value settles, an Observable completes,
 * errors or is unsubscribed, a stream ends, fails or is destroyed (also when a promise resolves to
 * an Observable or a stream). An Observable must be subscribed, once: Nest does that for handlers.
 */
function holdUntilDone(result: unknown, release: () => Promise<void>): unknown {
  if (isObservable(result)) return (result as Observable<unknown>).pipe(finalize(() => void release()));
  const stream = result instanceof StreamableFile ? result.getStream() : result instanceof Readable ? result : undefined;
  if (stream) {
    finished(stream, () => void release());
    return result;
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(
      (value) => (isObservable(value) || value instanceof StreamableFile || value instanceof Readable ? holdUntilDone(value, release) : release().then(() => value)),
      async (error: unknown) => {
        await release();
        throw error; // the method's own error, untouched
      },
    );
  }
  return release().then(() => result);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * Releases every handle, once however often it is called, and never throws: the method's own result
 * or error is what the caller gets. A lock lost meanwhile is logged (the method could see it through
 * its signal and chose its answer); any other release failure is logged too.
 */
function releaseOnce(handles: readonly LockHandle[], spec: DistributedLockSpec): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= (async () => {
      for (const handle of [...handles].reverse()) {
        try {
          await handle.release();
        } catch (error) {
          if (error instanceof LockLostError) logger.warn(`${spec.method} completed after its lock was lost: ${error.message}`);
          else logger.error(`${spec.method}: releasing its lock on "${handle.resource}" failed: ${String(error)}`);
        }
      }
    })());
}

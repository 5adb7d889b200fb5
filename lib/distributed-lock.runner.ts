import { finished, Readable } from 'node:stream';
import { Logger, StreamableFile } from '@nestjs/common';
import { isObservable, finalize, type Observable } from 'rxjs';
import { InvalidResourceNameError, LockLostError, LockServiceClosedError, LockTimeoutError } from './errors.js';
import type { DistributedLockSpec } from './distributed-lock.decorator.js';
import { runInLockContext } from './lock-context.js';
import type { LockHandle } from './lock-handle.js';
import { lockServiceRegistry } from './lock-service.registry.js';

const logger = new Logger('ZkLock');

/**
 * Runs one call of a @DistributedLock method: in the caller's lock context (or a fresh one), takes
 * the lock(s), calls the method, and releases when its result settles.
 */
export function runGuarded(instance: object, spec: DistributedLockSpec, args: unknown[], call: () => unknown): Promise<unknown> {
  const service = lockServiceRegistry.serviceFor(instance, spec.method);
  return runInLockContext(async () => {
    const resources = resourcesOf(spec, args);
    const skipWhenBusy = spec.options.onBusy === 'skip';
    const waitTimeoutMs = spec.options.waitTimeoutMs ?? (skipWhenBusy ? 0 : undefined);
    let handles: LockHandle[];
    try {
      handles = await service.acquireAll(resources, { waitTimeoutMs });
    } catch (error) {
      // Busy, or the application is stopping: a run that may be skipped is skipped.
      if (skipWhenBusy && (error instanceof LockTimeoutError || error instanceof LockServiceClosedError)) return undefined;
      throw error;
    }
    let result: unknown;
    try {
      result = call();
    } catch (error) {
      await releaseAll(handles);
      throw error;
    }
    return holdUntilSettled(result, handles, spec);
  });
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

/**
 * Keeps the locks until the result is done: a promise or value settles, an Observable completes,
 * errors or is unsubscribed, a stream ends, fails or is destroyed.
 */
function holdUntilSettled(result: unknown, handles: LockHandle[], spec: DistributedLockSpec): unknown {
  if (isObservable(result)) {
    return (result as Observable<unknown>).pipe(finalize(() => void releaseAll(handles).catch(() => undefined)));
  }
  const stream = result instanceof StreamableFile ? result.getStream() : result instanceof Readable ? result : undefined;
  if (stream) {
    finished(stream, () => void releaseAll(handles).catch(() => undefined));
    return result;
  }
  return Promise.resolve(result).then(
    async (value) => {
      const lost = await releaseAll(handles);
      // The method could see the loss through its lock's signal and chose its answer: it stands.
      if (lost) logger.warn(`${spec.method} completed after its lock was lost: ${lost.message}`);
      return value;
    },
    async (error: unknown) => {
      await releaseAll(handles);
      throw error; // the method's own error, untouched
    },
  );
}

/** Releases every handle; returns the LockLostError of one that was lost meanwhile, if any. */
async function releaseAll(handles: readonly LockHandle[]): Promise<LockLostError | undefined> {
  let lost: LockLostError | undefined;
  for (const handle of [...handles].reverse()) {
    try {
      await handle.release();
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
      lost ??= error;
    }
  }
  return lost;
}

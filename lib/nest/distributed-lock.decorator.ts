import { InvalidOptionsError } from '../errors.js';
import { validateLockKind } from '../recipes/lock-kind.js';
import type { DistributedLockOptions, DistributedLockSpec, LockResource } from './distributed-lock.options.js';
import { runGuarded } from './distributed-lock.runner.js';
import { wrapMethod } from './wrap-method.js';
import { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants.js';
import { checkMs } from '../shared/durations.js';
import { validateLayout } from '../queue/layouts.js';
import { validateLockContext, validateReleaseMode } from '../context/lock-request.js';
import { validateZkPath } from '../zookeeper/paths.js';

/** Every key of DistributedLockOptions. */
const OPTION_NAMES: ReadonlySet<string> = new Set<keyof DistributedLockOptions>([
  'mode',
  'permits',
  'layout',
  'zkPath',
  'onReleaseRequest',
  'waitTimeoutMs',
  'onBusy',
  'holdAtLeastMs',
  'oncePerTick',
  'lockContext',
]);

/**
 * Takes a distributed lock around a method: controller handlers (HTTP, RPC, WebSocket), provider
 * methods and `@Cron` jobs alike. The lock is released when the method's result settles; for an
 * Observable or a stream, when it completes, errors or is unsubscribed. A decorated method always
 * returns a Promise (of the Observable or stream, if that is what it returns).
 *
 * The method is wrapped where it is declared, keeping its name and every reflect-metadata key, so
 * `@Cron`, Swagger and other decorators work stacked above or below it. A `@Cron` or `@Interval`
 * method runs at most once per tick across the cluster (see `oncePerTick`).
 */
export function DistributedLock(resource: LockResource, options: DistributedLockOptions = {}): MethodDecorator {
  if (!(typeof resource === 'function' || (typeof resource === 'string' && resource.length > 0))) {
    throw new InvalidOptionsError('@DistributedLock resource', 'must be a non-empty string or a function of the method arguments');
  }
  const unknown = Object.keys(options).filter((key) => !OPTION_NAMES.has(key));
  if (unknown.length > 0) {
    // A misspelt or foreign option (ShedLock's lockAtLeastFor) would otherwise do nothing, silently.
    throw new InvalidOptionsError('@DistributedLock options', `${unknown.join(', ')} is not an option; the options are ${[...OPTION_NAMES].join(', ')}`);
  }
  if (options.onBusy !== undefined && options.onBusy !== 'throw' && options.onBusy !== 'skip') {
    throw new InvalidOptionsError('@DistributedLock onBusy', `must be 'throw' or 'skip', got ${String(options.onBusy)}`);
  }
  checkMs(options.waitTimeoutMs, '@DistributedLock waitTimeoutMs', { max: Infinity });
  checkMs(options.holdAtLeastMs, '@DistributedLock holdAtLeastMs');
  if (options.oncePerTick !== undefined && typeof options.oncePerTick !== 'boolean') {
    throw new InvalidOptionsError('@DistributedLock oncePerTick', `must be true or false, got ${String(options.oncePerTick)}`);
  }
  validateLockKind(options, '@DistributedLock ');
  validateLayout(options.layout, '@DistributedLock layout');
  validateReleaseMode(options.onReleaseRequest, '@DistributedLock onReleaseRequest');
  validateLockContext(options.lockContext, '@DistributedLock lockContext');
  if (typeof options.zkPath === 'string') validateZkPath(options.zkPath);
  else if (options.zkPath !== undefined && typeof options.zkPath !== 'function') {
    throw new InvalidOptionsError('@DistributedLock zkPath', 'must be an absolute ZooKeeper path or a function of the method arguments returning one');
  }
  return (target, key, descriptor: PropertyDescriptor) => {
    const spec: DistributedLockSpec = { resource, options, method: `${target.constructor.name}.${String(key)}` };
    const wrapped = wrapMethod('@DistributedLock', key, descriptor, (original) =>
      function (this: object, ...args: unknown[]): unknown {
        return runGuarded(this, spec, args, () => original.apply(this, args));
      },
    );
    Reflect.defineMetadata(DISTRIBUTED_LOCK_METADATA, spec, wrapped);
    descriptor.value = wrapped;
    return descriptor;
  };
}

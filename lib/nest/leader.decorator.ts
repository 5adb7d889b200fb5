import { Logger } from '@nestjs/common';
import { LockServiceClosedError } from '../errors.js';
import { lockServiceRegistry } from './lock-service.registry.js';
import { type LeaderOptions, type LeaderSpec, validateLeaderOptions, wrapMethod } from './leader.options.js';
import { LEADER_METADATA } from './zk-lock.constants.js';

const logger = new Logger('ZkLock');

/**
 * Runs the method only on the current leader of `group`: elsewhere the call is skipped and returns
 * undefined (a `skipped` event, reason `not-leader`, and a debug log line). Stacked with `@Cron` or
 * `@Interval`, a schedule that runs on the leader only. Inside the method, `heldLock(group)` is the
 * leadership (its `signal`, `fencingToken`, `assertHeld`). The group is joined at start-up and left
 * at shutdown; a leader that gives up (shutdown) waits for a run in progress, up to shutdownGraceMs.
 */
export function Leader(group: string, options: LeaderOptions = {}): MethodDecorator {
  validateLeaderOptions('@Leader', group, options);
  return (target, key, descriptor: PropertyDescriptor) => {
    const spec: LeaderSpec = { group, options, method: `${target.constructor.name}.${String(key)}` };
    const wrapped = wrapMethod('@Leader', key, descriptor, (original) =>
      function (this: object, ...args: unknown[]): unknown {
        const service = lockServiceRegistry.serviceFor(this, spec.method);
        let term;
        try {
          term = service.elect(group, options).current;
        } catch (error) {
          if (error instanceof LockServiceClosedError) return undefined; // the application is stopping: nobody leads here
          throw error;
        }
        if (!term?.isHeld()) {
          service.reportSkipped(group, 'not-leader');
          return undefined;
        }
        const result = original.apply(this, args);
        if (isThenable(result)) {
          // A voluntary end (shutdown, resign) lets this run finish before the next leader starts.
          term.stopsWith?.(Promise.resolve(result));
        }
        return result;
      },
    );
    Reflect.defineMetadata(LEADER_METADATA, spec, wrapped);
    descriptor.value = wrapped;
    logger.verbose?.(`${spec.method} runs on the leader of "${group}" only`);
    return descriptor;
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

import { type LeaderOptions, type LeaderSpec, validateLeaderOptions } from './leader.options.js';
import { ON_LEADERSHIP_METADATA } from './zk-lock.constants.js';

/**
 * Calls the provider method with the `LeaderHandle` each time this instance becomes leader of
 * `group`: start the leader's work there (a queue consumer, a relay) and stop it when
 * `handle.signal` aborts. A returned promise means "the work is running": on a voluntary end
 * (shutdown) the next leader starts only once it settled, or after shutdownGraceMs. A method that
 * throws or rejects while leading is logged, and this instance resigns (another one leads). The
 * group is joined at start-up and left at shutdown, without code.
 */
export function OnLeadership(group: string, options: LeaderOptions = {}): MethodDecorator {
  validateLeaderOptions('@OnLeadership', group, options);
  return (target, key, descriptor: PropertyDescriptor) => {
    const spec: LeaderSpec = { group, options, method: `${target.constructor.name}.${String(key)}` };
    Reflect.defineMetadata(ON_LEADERSHIP_METADATA, spec, descriptor.value as object);
    return descriptor;
  };
}

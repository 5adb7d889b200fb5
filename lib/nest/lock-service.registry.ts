import { ZkLockError } from '../errors.js';
import type { LockService } from '../service/lock.service.js';

/**
 * Which LockService a decorated method uses. The wrapper is installed when the class is declared,
 * before any application exists, so at call time it looks up the service of the application that
 * owns the instance (several applications can share a process, as in tests).
 */
const byInstance = new WeakMap<object, LockService>();
const running = new Set<LockService>();

export const lockServiceRegistry = {
  start(service: LockService, instances: Iterable<object>): void {
    running.add(service);
    for (const instance of instances) byInstance.set(instance, service);
  },
  stop(service: LockService): void {
    running.delete(service);
  },
  /** The service for `instance`; the only running one for objects no application owns. */
  serviceFor(instance: object, method: string, decorator = '@DistributedLock'): LockService {
    const service = byInstance.get(instance);
    if (service) return service;
    if (running.size === 1) return running.values().next().value as LockService;
    throw new ZkLockError(
      running.size === 0
        ? `${method} is decorated with ${decorator}, but no LockService is running. Import ZkLockModule.forRoot() ` +
            '(or forRootAsync) in the application, and call the method after the application has initialised.'
        : `${method} is decorated with ${decorator}, but its object is not a provider of any running application ` +
            'and several LockServices are running. Make the class a provider of the application whose lock it needs.',
    );
  },
};

import type { SessionSource } from '../../lib/queue/queue.types.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';

/**
 * A session source that counts the requests its sessions send, per operation: how a test sees which
 * client a release woke (a woken waiter reads the queue again), and the fault suite's clients how
 * often a release granted the lock by write (transactions). Counts, never times. Free of Vitest, for those clients.
 */
export function countingSessions(connection: SessionSource) {
  const counts = { getChildren: 0, getData: 0, setData: 0, watchNode: 0, create: 0, delete: 0, multi: 0 };
  const counted = new Set(Object.keys(counts));
  const wrapped = new WeakMap<object, ZkSessionApi>();
  const source = {
    // None: every acquire asks session(), which hands out the counting proxy.
    live: undefined,
    async session(signal?: AbortSignal): Promise<ZkSessionApi> {
      const session = await connection.session(signal);
      let proxy = wrapped.get(session);
      if (!proxy) {
        proxy = new Proxy(session, {
          get(target, property, receiver) {
            const value: unknown = Reflect.get(target, property, receiver);
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (typeof property === 'string' && counted.has(property)) counts[property as keyof typeof counts] += 1;
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        wrapped.set(session, proxy);
      }
      return proxy;
    },
  };
  return { source, counts };
}

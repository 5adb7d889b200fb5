import { describe, expect, it } from 'vitest';
import { LEASE_POOLS, LeasePool } from '../../lib/recipes/lease-pool.js';
import { RecipeRuntime } from '../../lib/recipes/recipe-runtime.js';
import type { MultiOp, ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

/** The session, with `before` run once before its first transaction that creates a node. */
function beforeFirstCreate(session: ZkSessionApi, before: () => Promise<void>): ZkSessionApi {
  let done = false;
  return new Proxy(session, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'multi') return typeof value === 'function' ? value.bind(target) : value;
      return async (ops: readonly MultiOp[]) => {
        if (!done && ops.some((op) => op.op === 'create')) {
          done = true;
          await before();
        }
        return target.multi(ops);
      };
    },
  });
}

describe("kazoo's semaphore layout: a lease is added only under the guard", () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  it('a guard deleted by force between the count and the add does not let two clients hold one permit', async () => {
    const rootPath = uniqueRoot('kazoo-guard');
    const zkPath = `${rootPath}-pool`;
    const [a, b, observer] = await Promise.all([connect({ sessionTimeoutMs: 4000 }), connect({ sessionTimeoutMs: 4000 }), connect()]);
    const poolB = new LeasePool(new RecipeRuntime(b, { rootPath }), LEASE_POOLS.kazoo, 1);
    let bHeld: Awaited<ReturnType<LeasePool['acquire']>> | undefined;
    const sessionA = await a.session();
    // A holds the guard and has counted no lease; before its add reaches ZooKeeper, its guard node is
    // deleted (by hand, or a forced revoke) and B takes the guard, counts none, and adds its lease.
    const interrupted = beforeFirstCreate(sessionA, async () => {
      const guards = await childrenOf(observer, `${zkPath}-__lock__`);
      expect(guards).toHaveLength(1); // A's
      await (await observer.session()).delete(`${zkPath}-__lock__/${guards[0]}`);
      bHeld = await poolB.acquire('job', { zkPath });
    });
    const source = { live: undefined, session: async () => interrupted };
    const poolA = new LeasePool(new RecipeRuntime(source, { rootPath }), LEASE_POOLS.kazoo, 1);
    const aAcquire = poolA.acquire('job', { zkPath });
    let aHeld = false;
    void aAcquire.then(() => (aHeld = true), () => undefined);

    // A's add was refused with its guard; A queues for the guard again and then waits for room.
    await expect.poll(() => bHeld !== undefined).toBe(true);
    await expect.poll(async () => (await childrenOf(observer, `${zkPath}-__lock__`)).length).toBe(1);
    expect(await childrenOf(observer, zkPath)).toHaveLength(1); // B's lease only
    expect(aHeld).toBe(false);

    await bHeld!.release();
    const lease = await aAcquire;
    expect(await childrenOf(observer, zkPath)).toHaveLength(1); // now A's
    await lease.release();
    expect(await childrenOf(observer, zkPath)).toHaveLength(0);
  });
});

import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, InvalidResourceNameError, LockOperationError, type ZkLockModuleOptions } from '../../lib/index.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { digestId, ZK_PERMS } from '../../lib/zookeeper/zk-acl.js';
import { ZkNoAuthError } from '../../lib/zookeeper/zk-errors.js';
import { randomName, seeded } from '../support/names.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';

describe('security: digest identity, ACLs on lock paths, the root ACL check, hostile names', () => {
  const zk = useZooKeeper();
  // Nothing here waits for a session to time out: a lease a busy machine cannot run out.
  const connect = useConnections(zk, STEADY_SESSION);

  const service = (options: Partial<ZkLockModuleOptions> = {}) => startLockApp(zk, options);

  it('with a digest, lock paths and lock nodes are created with its ACL: only that identity creates, deletes or writes, and strangers get a clear error and leave nothing', async () => {
    const rootPath = uniqueRoot('acl');
    const app = await service({ rootPath, digest: 'orders-app:s3cret' });
    const held = await app.locks.acquire('orders:1');
    const stranger = await connect();
    const session = await stranger.session();
    const expected = [
      { scheme: 'digest', id: digestId('orders-app:s3cret'), perms: ZK_PERMS.ALL },
      { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
    ];
    // Read as the owner: ZooKeeper shows a digest's hash only to clients with ADMIN on the node.
    const owner = await (await connect({ digest: 'orders-app:s3cret' })).session();
    expect(await owner.getAcl(rootPath)).toEqual(expected);
    expect(await owner.getAcl(`${rootPath}/orders:1`)).toEqual(expected);
    // A client without the identity can neither queue nor break the holder's lock.
    const error = await new FairLock(stranger, { rootPath }).acquire('orders:1', { waitTimeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockOperationError);
    expect((error as Error).message).toMatch(/NOAUTH.*digest/);
    const [node] = await childrenOf(stranger, `${rootPath}/orders:1`);
    await expect(session.delete(`${rootPath}/orders:1/${node}`)).rejects.toBeInstanceOf(ZkNoAuthError);
    // The lock node itself was created with the ACL (in the create request): a stranger cannot
    // write it, which would hand the lock on.
    expect(await owner.getAcl(`${rootPath}/orders:1/${node}`)).toEqual(expected);
    await expect(session.setData(`${rootPath}/orders:1/${node}`, Buffer.from('x'))).rejects.toBeInstanceOf(ZkNoAuthError);
    await expect(new FairLock(stranger, { rootPath }).acquire('orders:2')).rejects.toBeInstanceOf(LockOperationError);
    // Another instance with the same identity queues and gets it.
    const other = await service({ rootPath, digest: 'orders-app:s3cret' });
    const next = other.locks.acquire('orders:1');
    await held.release();
    await (await next).release();
    expect(await childrenOf(stranger, `${rootPath}/orders:1`)).toEqual([]);
    await app.application.close();
    await other.application.close();
  });

  it("checks the root path's ACL at start-up: an error or a warning when strangers may create or delete there", async () => {
    const rootPath = uniqueRoot('openroot');
    const session = await (await connect()).session();
    await session.create(rootPath, '', 'PERSISTENT'); // open, as ZooKeeper creates nodes by default
    const failed = await service({ rootPath, digest: 'orders-app:s3cret', rootAclCheck: 'error' }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(InvalidOptionsError);
    expect((failed as Error).message).toMatch(/rootPath.*world:anyone create or delete/);
    const warned = await service({ rootPath, digest: 'orders-app:s3cret', rootAclCheck: 'warn' });
    await warned.application.close();
    // A root path it creates itself passes the check.
    const fresh = await service({ rootPath: uniqueRoot('fresh'), digest: 'orders-app:s3cret', rootAclCheck: 'error' });
    await fresh.application.close();
    await expect(service({ rootAclCheck: 'loud' as never })).rejects.toThrow(/rootAclCheck/);
    await expect(service({ digest: 'no-colon' })).rejects.toThrow(/digest.*user:password/);
  });

  it('fuzz: 2,000 hostile names are each refused with a typed error or locked inside rootPath, never two names on one node', async () => {
    const rootPath = uniqueRoot('fuzz');
    // 2,000 acquires in a row on a loaded machine: a lease the client's pings keep (not about sessions ending).
    const app = await service({ rootPath, rootAclCheck: 'off', ...STEADY_SESSION });
    const random = seeded(424242);
    const parents = new Map<string, string>();
    let refused = 0;
    const names = Array.from({ length: 2000 }, (_, i) => (i % 100 === 0 ? 'x'.repeat(400 + i) : randomName(random)));
    names.push('\ud800lone', '', '.', '..', '/', '\u0000');
    const one = async (name: string): Promise<void> => {
      let lock;
      try {
        lock = (await app.locks.tryAcquire(name)) as { release(): Promise<void> } & Record<string, unknown> | null;
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidResourceNameError);
        refused += 1;
        return;
      }
      // Not null: no name in flight at the same time (the other lanes) holds this one's node either.
      expect(lock).not.toBeNull();
      const path = (lock as unknown as { path: string }).path;
      expect(path.startsWith(`${rootPath}/`)).toBe(true);
      const parent = path.slice(0, path.lastIndexOf('/'));
      expect(parent.lastIndexOf('/')).toBe(rootPath.length); // exactly one component below the root
      expect(parents.has(parent), `${JSON.stringify(name)} and ${JSON.stringify(parents.get(parent))} share ${parent}`).toBe(false);
      parents.set(parent, name);
      await lock!.release();
    };
    // 16 lanes, each name after the other: the same names and checks, without 2,000 round trips in a row.
    const queue = [...new Set(names)];
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) await one(name);
    }));
    expect(refused).toBeGreaterThan(0);
    expect(parents.size).toBeGreaterThan(1500);
    await app.application.close();
  }, 120_000);
});

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockService, ZkRollbackError } from '../../lib/index.js';
import { childrenOf, eventually, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

async function service(connectionString: string, rootPath: string, tokenEpoch?: number): Promise<LockService> {
  const locks = new LockService({ connectionString, rootPath, sessionTimeoutMs: 1500, rootAclCheck: 'off', tokenEpoch });
  await locks.onModuleInit();
  return locks;
}

async function stop(locks: LockService): Promise<void> {
  await locks.beforeApplicationShutdown();
  await locks.onApplicationShutdown();
}

describe('ZooKeeper restored with an empty data directory', () => {
  const zk = useZooKeeper({ own: true });
  const connect = useConnections(zk);

  it('a process that saw newer zxids refuses to grant, leaves no node, and a raised tokenEpoch keeps tokens growing', async () => {
    const rootPath = uniqueRoot('restore');
    const before = await service(zk.connectString, rootPath);
    let lastToken = '';
    // Enough writes that the old history is well ahead of a fresh server's.
    for (let i = 0; i < 20; i++) {
      await before.withLock(`r${i % 3}`, (lock) => {
        lastToken = lock.fencingToken;
      });
    }
    await zk.server!.stop();
    rmSync(join(zk.server!.dataDir, 'version-2'), { recursive: true, force: true });
    await zk.server!.start();

    // The old session is unknown to the new server: the connection opens a fresh one, and the next
    // lock finds the server's zxids below what it saw.
    const refused = await eventually(
      () => before.withLock('r0', () => 'granted', { waitTimeoutMs: 3000 }).then(
        () => undefined,
        (error: unknown) => error,
      ),
      { timeoutMs: 30_000, what: 'a lock attempt on the restored server to fail' },
    );
    expect(refused).toBeInstanceOf(ZkRollbackError);
    expect((refused as Error).message).toMatch(/history went back.*Raise the tokenEpoch option/);
    const observer = await connect();
    await eventually(async () => (await childrenOf(observer, `${rootPath}/r0`)).length === 0, { what: 'no node left behind' });

    // A process started with a raised epoch locks again, and its tokens are above the old ones.
    const after = await service(zk.connectString, rootPath, 1);
    const token = await after.withLock('r0', (lock) => lock.fencingToken);
    expect(token.slice(0, 4)).toBe('0001');
    expect(token > lastToken).toBe(true);
    expect(BigInt(token) > BigInt(lastToken)).toBe(true);
    await stop(after);
    await stop(before);
  }, 60_000);
});

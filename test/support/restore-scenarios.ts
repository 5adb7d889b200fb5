import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockService, ZkRollbackError } from '../../lib/index.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';
import { startCpuLoad } from './cpu-load.js';
import { childrenOf, eventually, uniqueRoot, useConnections, useZooKeeper } from './zk-fixtures.js';
import { startZkEnsemble, type ZkEnsemble } from './zk-server.js';

async function service(connectionString: string, rootPath: string, tokenEpoch?: number): Promise<LockService> {
  const locks = new LockService({ connectionString, rootPath, sessionTimeoutMs: 1500, rootAclCheck: 'off', tokenEpoch });
  await locks.onModuleInit();
  return locks;
}

async function stop(locks: LockService): Promise<void> {
  await locks.beforeApplicationShutdown();
  await locks.onApplicationShutdown();
}

/** Runs `body` with every core busy when `loaded`. */
async function maybeLoaded<T>(loaded: boolean, body: () => Promise<T>): Promise<T> {
  const stopLoad = loaded ? startCpuLoad() : undefined;
  try {
    return await body();
  } finally {
    await stopLoad?.();
  }
}

/** Copies of each server's data, to restore later. */
function backUp(ensemble: ZkEnsemble): string[] {
  return ensemble.servers.map((server) => {
    const copy = `${server.dataDir}.backup`;
    rmSync(copy, { recursive: true, force: true });
    cpSync(join(server.dataDir, 'version-2'), copy, { recursive: true });
    return copy;
  });
}

async function restore(ensemble: ZkEnsemble, backups: string[]): Promise<void> {
  await Promise.all(ensemble.servers.map((server) => server.stop()));
  ensemble.servers.forEach((server, i) => {
    rmSync(join(server.dataDir, 'version-2'), { recursive: true, force: true });
    cpSync(backups[i]!, join(server.dataDir, 'version-2'), { recursive: true });
  });
  await Promise.all(ensemble.servers.map((server) => server.start()));
}

/**
 * Takes the read lock `r` until an attempt ends in a grant or a refusal (other failures, such as a
 * timeout while the ensemble elects, are tried again). Returns the refusal, or an Error naming a
 * grant whose token is below `newest`, or undefined for a grant above it.
 */
async function nextAttempt(locks: LockService, newest: string): Promise<unknown> {
  return eventually(
    () => locks.withLock('r', (lock) => lock.fencingToken, { mode: 'read', waitTimeoutMs: 3000 }).then(
      (token) => (token < newest ? new Error(`granted a lower token ${token} after ${newest}`) : 'granted'),
      (error: unknown) => (error instanceof ZkRollbackError ? error : undefined),
    ),
    { timeoutMs: 30_000, what: 'a lock attempt on the restored ensemble to end' },
  );
}

/**
 * The restore checks (see docs/operations.md, Restoring ZooKeeper): a real server restarted with an
 * empty data directory, and a real 3-node ensemble restored from a backup. With `loaded`, every core
 * is kept busy from the restore on; that variant runs on its own (test/load), since the load would
 * slow every other test file running beside it.
 */
export function describeRestores(loaded: boolean): void {
  describe(`ZooKeeper restored${loaded ? ', with every core busy' : ''}`, () => {
    const zk = useZooKeeper({ own: true });
    const connect = useConnections(zk);

    /** Creates the lock `r`'s queue parent as a persistent node (in the backup whatever the load); returns the session. */
    async function queueParent(connectionString: string, rootPath: string): Promise<ZkSessionApi> {
      const observer = await connect({ connectionString, sessionTimeoutMs: 10_000 });
      const session = await observer.session();
      await session.create(rootPath, '', 'PERSISTENT');
      await session.create(`${rootPath}/r`, '', 'PERSISTENT');
      return session;
    }

    it('a process that saw newer zxids refuses to grant after a restart with an empty data directory, leaves no node, and a raised tokenEpoch keeps tokens growing', async () => {
      const rootPath = uniqueRoot('restore');
      const before = await service(zk.connectString, rootPath);
      let lastToken = '';
      // Enough writes that the old history is well ahead of a fresh server's.
      for (let i = 0; i < 20; i++) {
        await before.withLock(`r${i % 3}`, (lock) => {
          lastToken = lock.fencingToken;
        });
      }
      const refused = await maybeLoaded(loaded, async () => {
        await zk.server!.stop();
        rmSync(join(zk.server!.dataDir, 'version-2'), { recursive: true, force: true });
        await zk.server!.start();
        // The old session is unknown to the new server: the connection opens a fresh one, and the
        // next lock finds the server's zxids below what it saw.
        return eventually(
          () => before.withLock('r0', () => 'granted', { waitTimeoutMs: 3000 }).then(
            (granted) => granted,
            (error: unknown) => (error instanceof ZkRollbackError ? error : undefined),
          ),
          { timeoutMs: 30_000, what: 'a lock attempt on the restored server to end' },
        );
      });
      expect(refused).toBeInstanceOf(ZkRollbackError);
      expect((refused as Error).message).toMatch(/history went back.*Raise the tokenEpoch option/);
      const observer = await connect();
      await eventually(async () => (await childrenOf(observer, `${rootPath}/r0`)).length === 0, { what: 'no node left behind' });

      // A process started with a raised epoch locks again, and its tokens are above the old ones.
      const after = await service(zk.connectString, rootPath, 1);
      const token = await after.withLock('r0', (lock) => lock.fencingToken);
      expect(token.slice(0, 4)).toBe('0001');
      expect(BigInt(token) > BigInt(lastToken)).toBe(true);
      await stop(after);
      await stop(before);
    }, 90_000);

    it('an ensemble restored from a backup goes on with higher zxids, but a lock\'s queue goes back: refused too', async () => {
      const ensemble = await startZkEnsemble(3);
      try {
        const rootPath = uniqueRoot('backup');
        // Persistent, so that it is in the backup whatever the load (ZooKeeper reaps an empty
        // container, and one created again after the backup is the next test's case).
        await queueParent(ensemble.connectString, rootPath);
        const locks = await service(ensemble.connectString, rootPath);
        for (let i = 0; i < 5; i++) await locks.withLock('r', () => undefined, { mode: 'read' });
        const backups = backUp(ensemble);
        let newest = '';
        for (let i = 0; i < 10; i++) newest = await locks.withLock('r', (lock) => lock.fencingToken, { mode: 'read' });
        const refused = await maybeLoaded(loaded, async () => {
          await restore(ensemble, backups);
          return nextAttempt(locks, newest);
        });
        expect(refused).toBeInstanceOf(ZkRollbackError);
        expect((refused as Error).message).toMatch(/seen the lock's queue at sequence \d+, the server now shows it at \d+/);
        await stop(locks);
      } finally {
        await ensemble.stop();
      }
    }, 120_000);

    it('an ensemble restored from a backup taken before the lock\'s queue was created again shows the older queue: refused', async () => {
      const ensemble = await startZkEnsemble(3);
      try {
        const rootPath = uniqueRoot('backup-requeue');
        const session = await queueParent(ensemble.connectString, rootPath);
        const locks = await service(ensemble.connectString, rootPath);
        let oldest = '';
        for (let i = 0; i < 3; i++) oldest = await locks.withLock('r', (lock) => lock.fencingToken, { mode: 'read' });
        const backups = backUp(ensemble);
        // The parent goes and is created again by the next lock, with a higher zxid: the new queue's
        // tokens are above the old one's.
        await session.delete(`${rootPath}/r`);
        let newest = '';
        for (let i = 0; i < 3; i++) newest = await locks.withLock('r', (lock) => lock.fencingToken, { mode: 'read' });
        expect(newest.slice(4, 24) > oldest.slice(4, 24)).toBe(true); // a newer queue
        const refused = await maybeLoaded(loaded, async () => {
          await restore(ensemble, backups);
          return nextAttempt(locks, newest);
        });
        expect(refused).toBeInstanceOf(ZkRollbackError);
        expect((refused as Error).message).toMatch(/seen the lock's queue created at zxid 0x[0-9a-f]+, the server now shows an older one/);
        await stop(locks);
      } finally {
        await ensemble.stop();
      }
    }, 120_000);
  });
}

/** What a caller still waiting for a lock is told when its application shuts down. Real ZooKeeper. */
import { describe, expect, it } from 'vitest';
import { LockServiceClosedError } from '../../lib/index.js';
import { startLockApp } from '../support/lock-app.js';
import { STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';

describe('shutdown with callers still queued', () => {
  const zk = useZooKeeper();

  const connect = useConnections(zk, STEADY_SESSION);

  for (const connection of ['its own', 'a supplied'] as const) {
    it(`a waiter still queued when the application shuts down is rejected with LockServiceClosedError (${connection} connection)`, async () => {
      const rootPath = uniqueRoot('shutdown');
      const holder = await startLockApp(zk, { ...STEADY_SESSION, rootPath, rootAclCheck: 'off' });
      // A supplied connection outlives the application: closing it cannot be what ends the waits.
      const stopping = await startLockApp(zk, { ...STEADY_SESSION, rootPath, rootAclCheck: 'off', ...(connection === 'a supplied' ? { connection: await connect() } : {}) });
      const held = await holder.locks.acquire('report');
      // Waiters in the stopping instance: queued in ZooKeeper and behind it in the cohort queue, one
      // of them with a signal of its own.
      const waiters = [
        stopping.locks.acquire('report'),
        stopping.locks.withLock('report', () => 'never'),
        stopping.locks.acquire('report', { signal: new AbortController().signal }),
      ];
      const outcomes = waiters.map((waiter) => waiter.then(() => 'granted', (error: unknown) => error));
      await eventually(
        async () => {
          const { waiters: queued, localWaiters = 0 } = await stopping.locks.inspect('report');
          return queued.length > 0 && queued.length + localWaiters >= 3;
        },
        { what: 'every waiter to queue' },
      );
      await stopping.application.close();
      for (const outcome of await Promise.all(outcomes)) {
        expect(outcome).toBeInstanceOf(LockServiceClosedError);
        expect((outcome as Error).message).toMatch(/"report".*shut down/);
      }
      await held.release();
      await holder.application.close();
    });
  }
});

/** What a caller still waiting for a lock is told when its application shuts down. Real ZooKeeper. */
import { describe, expect, it } from 'vitest';
import { LockServiceClosedError } from '../../lib/index.js';
import { startLockApp } from '../support/lock-app.js';
import { eventually, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

describe('shutdown with callers still queued', () => {
  const zk = useZooKeeper();

  it('a waiter still queued when the application shuts down is rejected with LockServiceClosedError', async () => {
    const rootPath = uniqueRoot('shutdown');
    const holder = await startLockApp(zk, { rootPath, rootAclCheck: 'off' });
    const stopping = await startLockApp(zk, { rootPath, rootAclCheck: 'off' });
    const held = await holder.locks.acquire('report');
    // Two waiters in the stopping instance: one queued in ZooKeeper, one behind it in the cohort queue.
    const waiters = [stopping.locks.acquire('report'), stopping.locks.withLock('report', () => 'never')];
    const outcomes = waiters.map((waiter) => waiter.then(() => 'granted', (error: unknown) => error));
    await eventually(
      async () => {
        const { waiters, localWaiters = 0 } = await stopping.locks.inspect('report');
        return waiters.length > 0 && waiters.length + localWaiters >= 2;
      },
      { what: 'both waiters to queue' },
    );
    await stopping.application.close();
    for (const outcome of await Promise.all(outcomes)) {
      expect(outcome).toBeInstanceOf(LockServiceClosedError);
      expect((outcome as Error).message).toMatch(/"report".*shut down/);
    }
    await held.release();
    await holder.application.close();
  });
});

/** Error messages are read by people: durations in them are rounded, and name the budget the caller set. */
import { afterEach, describe, expect, it } from 'vitest';
import { LockTimeoutError } from '../../lib/index.js';
import { InMemoryZooKeeper } from '../../lib/testing/index.js';

describe('durations in error messages', () => {
  let zookeeper: InMemoryZooKeeper | undefined;
  afterEach(async () => {
    await zookeeper?.close();
  });

  it('a LockTimeoutError rounds a measured duration', () => {
    expect(new LockTimeoutError('r', 2999.9972159999998).message).toMatch(/^Timed out after 3000 ms waiting for the lock on "r"\./);
    expect(new LockTimeoutError('r', 2.345).message).toMatch(/^Timed out after 2\.3 ms /);
    expect(new LockTimeoutError('r', 0).message).toMatch(/^Timed out after 0 ms /);
  });

  it('acquireAll (and so a decorated method) reports the whole waitTimeoutMs it was given, not what was left of it', async () => {
    zookeeper = new InMemoryZooKeeper();
    const [holder, waiter] = [await zookeeper.createLockService(), await zookeeper.createLockService()];
    const held = await holder.acquire('b');
    const error = await waiter.acquireAll(['a', 'b'], { waitTimeoutMs: 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ resource: 'b', waitTimeoutMs: 20 });
    expect((error as Error).message).toMatch(/^Timed out after 20 ms waiting for the lock on "b"\./);
    await held.release();
  });
});

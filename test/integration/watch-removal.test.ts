import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../lib/zookeeper/zk-connection-like.js';
import { LockAbortedError, LockTimeoutError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { ReadWriteLock } from '../../lib/recipes/read-write-lock.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZkProxy, useZooKeeper, eventually, watchesByPath } from '../support/zk-fixtures.js';

/**
 * A waiter that stops waiting (timed out, aborted) removes its data watch from the server, so that
 * nothing of it is left until the watched node changes; but not while another waiter of its session
 * shares that watch (ZooKeeper keeps one per node per session). Read from the server with `wchp`.
 */
describe('watch removal, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const watchesOn = async (path: string): Promise<number> => (await watchesByPath(zk.connectString)).get(path) ?? 0;

  it("an aborted waiter and a timed-out one leave no watch on the node they waited for", async () => {
    const rootPath = uniqueRoot('unwatch');
    const [h, w] = await Promise.all([connect(), connect()]);
    const held = await new FairLock(h, { rootPath }).acquire('r');
    const lock = new FairLock(w, { rootPath });

    const controller = new AbortController();
    const aborted = lock.acquire('r', { signal: controller.signal });
    await eventually(async () => (await watchesOn(held.path)) === 1, { what: "the waiter's watch on the holder's node" });
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    await eventually(async () => (await watchesOn(held.path)) === 0, { what: 'the aborted waiter to remove its watch' });

    await expect(lock.acquire('r', { waitTimeoutMs: 1000 })).rejects.toBeInstanceOf(LockTimeoutError);
    await eventually(async () => (await watchesOn(held.path)) === 0, { what: 'the timed-out waiter to remove its watch' });
    await queueLength(h, `${rootPath}/r`, 1);
    expect(held.isHeld()).toBe(true);
    await held.release();
  });

  const startProxy = useZkProxy(zk);

  it('a removed watch is not set again when the session reconnects (the client forgot it too)', async () => {
    const rootPath = uniqueRoot('unwatch-reconnect');
    const proxy = await startProxy();
    const [h, w] = await Promise.all([connect(), connect({ connectionString: proxy.connectString, sessionTimeoutMs: 4000 })]);
    const states: ConnectionState[] = [];
    w.onStateChange((state) => states.push(state));
    const held = await new FairLock(h, { rootPath }).acquire('r');
    const controller = new AbortController();
    const aborted = new FairLock(w, { rootPath }).acquire('r', { signal: controller.signal });
    await eventually(async () => (await watchesOn(held.path)) === 1, { what: "the waiter's watch" });
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    await eventually(async () => (await watchesOn(held.path)) === 0, { what: 'the watch removed' });
    // On reconnecting, a client sets again every watch it still knows of.
    proxy.dropConnections();
    await eventually(() => states.includes('reconnected'), { what: 'the session back' });
    await (await w.session()).getChildren(`${rootPath}/r`);
    expect(await watchesOn(held.path)).toBe(0);
    await held.release();
  });

  it('a waiter that gives up keeps the watch another waiter of its session shares; the last one removes it', async () => {
    const rootPath = uniqueRoot('unwatch-shared');
    const [h, c] = await Promise.all([connect(), connect()]);
    const writer = (await new ReadWriteLock(h, { rootPath }).write.acquire('doc')) as GrantedLock;
    const readers = new ReadWriteLock(c, { rootPath });
    // Both reads watch the write below them: one watch of c's session on that node.
    const first = readers.read.acquire('doc', { waitTimeoutMs: 1000 });
    const controller = new AbortController();
    const second = readers.read.acquire('doc', { signal: controller.signal });
    await queueLength(h, `${rootPath}/doc`, 3);
    await eventually(async () => (await watchesOn(writer.path)) === 1, { what: "the readers' watch" });

    await expect(first).rejects.toBeInstanceOf(LockTimeoutError);
    // A removal would have been sent when the first read gave up: a round trip on c's session after
    // it means the server has applied it, had there been one.
    await (await c.session()).getChildren(`${rootPath}/doc`);
    expect(await watchesOn(writer.path)).toBe(1);

    controller.abort();
    await expect(second).rejects.toBeInstanceOf(LockAbortedError);
    await eventually(async () => (await watchesOn(writer.path)) === 0, { what: 'the last reader to remove the watch' });
    expect(writer.isHeld()).toBe(true);
    await writer.release();
  });
});

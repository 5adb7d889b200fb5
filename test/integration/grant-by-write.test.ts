import { describe, expect, it } from 'vitest';
import { LockTimeoutError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { ReadWriteLock } from '../../lib/recipes/read-write-lock.js';
import { childrenOf, countingSessions, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZkProxy, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';

/**
 * Grant by write: a holder that may have a successor writes its node and deletes it in one transaction, and the
 * waiter watching that node takes the write as its grant, without listing the queue again. Only a
 * holder's release may grant that way: a waiter that gives up or a session that ends deletes its
 * node without the write, and whoever watched it must list the queue and keep waiting.
 */
describe('grant by write: a releasing holder grants the entry watching it, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  /** Resolves to whether `promise` settled within a few event-loop turns and a round trip to the server. */
  async function settled(promise: Promise<unknown>, connection: { session(): Promise<{ getChildren(path: string): Promise<unknown> }> }): Promise<boolean> {
    let done = false;
    void promise.then(
      () => (done = true),
      () => (done = true),
    );
    // Two round trips on the same server: any notification sent before them has been delivered.
    const session = await connection.session();
    await session.getChildren('/');
    await session.getChildren('/');
    await new Promise((resolve) => setTimeout(resolve, 50));
    return done;
  }

  it("grants the waiter from the holder's write: a holder that waited writes its node and deletes it, its successor lists the queue once", async () => {
    const rootPath = uniqueRoot('grant-by-write');
    const [a, h, w] = await Promise.all([connect(), connect(), connect()]).then((all) => all.map((c) => ({ connection: c, ...countingSessions(c) })));
    const lockOf = (client: typeof a) => new FairLock(client!.source, { rootPath });

    // Uncontended: released with the delete alone.
    const first = await lockOf(a).acquire('r');
    const holding = lockOf(h).acquire('r');
    await queueLength(a!.connection, `${rootPath}/r`, 2);
    const waiting = lockOf(w).acquire('r');
    await queueLength(a!.connection, `${rootPath}/r`, 3);
    const last = lockOf(a).acquire('r'); // so that w's grant, too, has someone after it
    await queueLength(a!.connection, `${rootPath}/r`, 4);
    expect(w!.counts.getChildren).toBe(1);
    // The first holder was granted with nobody behind it: no grant by write, and h lists the queue again.
    await first.release();
    expect(a!.counts).toMatchObject({ setData: 0, delete: 1, multi: 0 });
    const hLock = await holding;
    expect(h!.counts.getChildren).toBe(2);
    // h waited, so it writes its node and deletes it, in one transaction...
    await hLock.release();
    expect(h!.counts).toMatchObject({ setData: 0, delete: 0, multi: 1 });
    const wLock = await waiting;
    // ...and w takes that write as its grant: no second listing.
    expect(w!.counts.getChildren).toBe(1);
    expect(BigInt(wLock.fencingToken)).toBeGreaterThan(BigInt(hLock.fencingToken));
    expect(BigInt(hLock.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    expect(wLock.queueId).toBe(first.queueId);
    await wLock.release();
    const lastLock = await last;
    expect(w!.counts.multi).toBe(1);
    expect(BigInt(lastLock.fencingToken)).toBeGreaterThan(BigInt(wLock.fencingToken));
    await lastLock.release();
    expect(await childrenOf(a!.connection, `${rootPath}/r`)).toEqual([]);
  });

  const startProxy = useZkProxy(zk);

  it('a contended release is one request on the wire, a transaction, and the waiter takes its write as the grant', async () => {
    const rootPath = uniqueRoot('grant-by-write-wire');
    const proxy = await startProxy();
    const [a, h, w] = await Promise.all([connect(), connect({ connectionString: proxy.connectString, sessionTimeoutMs: 4000 }), connect()]);
    const counted = countingSessions(w);
    const first = await new FairLock(a, { rootPath }).acquire('r');
    const holding = new FairLock(h, { rootPath }).acquire('r');
    await queueLength(a, `${rootPath}/r`, 2);
    const waiting = new FairLock(counted.source, { rootPath }).acquire('r');
    await queueLength(a, `${rootPath}/r`, 3);
    await first.release();
    const hLock = await holding; // h waited: its release hands on
    proxy.clearTraffic();
    await hLock.release();
    // The lease's renewal read (exists) may go out at any time; the release itself is the multi.
    const requests = proxy.traffic().flatMap((e) => (e.kind === 'request' && e.op !== 'exists' ? [e.op] : []));
    expect(requests).toEqual(['multi']);
    const wLock = await waiting;
    expect(counted.counts.getChildren).toBe(1); // granted by the write, without listing the queue again
    expect(BigInt(wLock.fencingToken)).toBeGreaterThan(BigInt(hLock.fencingToken));
    expect(await childrenOf(a, `${rootPath}/r`)).toEqual([wLock.path.slice(wLock.path.lastIndexOf('/') + 1)]);
    await wLock.release();
  });

  it('a waiter whose predecessor gives up lists the queue again and keeps waiting behind the holder', async () => {
    const rootPath = uniqueRoot('grant-by-write-timeout');
    const [h, a, b] = await Promise.all([connect(), connect(), connect()]);
    const holder = await new FairLock(h, { rootPath }).acquire('r');
    const giving = new FairLock(a, { rootPath }).acquire('r', { waitTimeoutMs: 1500 });
    await queueLength(h, `${rootPath}/r`, 2);
    const last = new FairLock(b, { rootPath }).acquire('r');
    await queueLength(h, `${rootPath}/r`, 3);
    await expect(giving).rejects.toBeInstanceOf(LockTimeoutError);
    await queueLength(h, `${rootPath}/r`, 2);
    expect(await settled(last, b)).toBe(false);
    expect(holder.isHeld()).toBe(true);
    await holder.release();
    const lastLock = await last;
    expect(BigInt(lastLock.fencingToken)).toBeGreaterThan(BigInt(holder.fencingToken));
    await lastLock.release();
  });

  it("a waiter whose predecessor's session expires keeps waiting behind the holder", async () => {
    const rootPath = uniqueRoot('grant-by-write-expire');
    const [h, a, b] = await Promise.all([connect(), connect(), connect()]);
    const holder = await new FairLock(h, { rootPath }).acquire('r');
    const requeued = new FairLock(a, { rootPath }).acquire('r');
    await queueLength(h, `${rootPath}/r`, 2);
    const last = new FairLock(b, { rootPath }).acquire('r');
    await queueLength(h, `${rootPath}/r`, 3);
    const bySequence = (names: string[]) => [...names].sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    const expiring = bySequence(await childrenOf(h, `${rootPath}/r`))[1]!;
    await expireSession(zk.connectString, a.sessionCredentials()!);
    // The expired waiter's node went with its session; it queues again, in its next session, last.
    await eventually(
      async () => {
        const names = bySequence(await childrenOf(h, `${rootPath}/r`));
        return names.length === 3 && !names.includes(expiring);
      },
      { what: 'the expired waiter to queue again in a new session' },
    );
    expect(await settled(last, b)).toBe(false);
    await holder.release();
    const lastLock = await last;
    await lastLock.release();
    await (await requeued).release();
  });

  it('a write holder that took a read under its lock does not grant by write: the next writer waits for the read', async () => {
    const rootPath = uniqueRoot('grant-by-write-downgrade');
    const [q, p, w] = await Promise.all([connect(), connect(), connect()]);
    const first = await new ReadWriteLock(q, { rootPath }).write.acquire('r');
    const pLock = new ReadWriteLock(p, { rootPath });
    const writing = pLock.write.acquire('r');
    await queueLength(q, `${rootPath}/r`, 2);
    const next = new ReadWriteLock(w, { rootPath }).write.acquire('r');
    await queueLength(q, `${rootPath}/r`, 3);
    await first.release();
    const written = await writing; // granted by write to p, which saw w behind it: p would grant by write too
    const read = await pLock.downgrade(written);
    await written.release();
    expect(await settled(next, w)).toBe(false);
    expect(read.isHeld()).toBe(true);
    await read.release();
    const nextLock = await next;
    // The read was created after the next writer queued, yet held before it: it carries its write's
    // token, so the writer's is still higher (a store keeping the highest token accepts it).
    expect(read.fencingToken).toBe(written.fencingToken);
    expect(BigInt(nextLock.fencingToken)).toBeGreaterThan(BigInt(read.fencingToken));
    await nextLock.release();
  });

  it('hands a write on to two readers of one session, which share one ZooKeeper watch', async () => {
    const rootPath = uniqueRoot('grant-by-write-readers');
    const [q, p, r] = await Promise.all([connect(), connect(), connect()]);
    const first = await new ReadWriteLock(q, { rootPath }).write.acquire('r');
    const writing = new ReadWriteLock(p, { rootPath }).write.acquire('r');
    await queueLength(q, `${rootPath}/r`, 2);
    const readers = countingSessions(r);
    const readLock = new ReadWriteLock(readers.source, { rootPath }).read;
    const reads = [readLock.acquire('r'), readLock.acquire('r')];
    await queueLength(q, `${rootPath}/r`, 4);
    await first.release();
    const written = await writing; // it waited: it hands on
    expect(await settled(Promise.race(reads), r)).toBe(false);
    await written.release();
    const held = await Promise.all(reads);
    expect(held.every((lock) => lock.isHeld())).toBe(true);
    expect(readers.counts.getChildren).toBe(2); // one listing each, when queueing: none after the grant by write
    expect(readers.counts.watchNode).toBe(2);
    for (const lock of held) expect(BigInt(lock.fencingToken)).toBeGreaterThan(BigInt(written.fencingToken));
    await Promise.all(held.map((lock) => lock.release()));
  });
});

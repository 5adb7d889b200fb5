import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { CohortLock, FairLock, InvalidOptionsError, LockAbortedError, LockLostError, LockService, LockTimeoutError } from '../../lib/index.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import type { LockRecipe } from '../../lib/recipes/recipe-runtime.js';
import type { SessionSource } from '../../lib/queue/queue.types.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { startLockApp } from '../support/lock-app.js';
import { childrenOf, countingSessions, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A child that is not a lock node (the queue skips it) keeps a lock's parent, a container, from
 * being reaped while the queue is empty, so that the requests counted do not depend on whether the
 * server's reaper (every 200 ms on the test servers) ran between a release and the next acquire.
 * Only where no handoff looks at the queue: the cohort counts any other child as someone waiting.
 */
const KEEP = 'not-a-lock-node';
async function keepParent(connection: ZkConnection, parent: string): Promise<void> {
  await (await connection.session()).create(`${parent}/${KEEP}`, '', 'PERSISTENT');
}

/**
 * `callers` callers of one process take the lock at `lockPath` (`${rootPath}/${resource}`), counting
 * the requests all but the first send: the first holds (its own node, and the lock's parent) until
 * `queued` nodes are in the queue, its own and the others' (their creates were sent before its
 * release, which the server then answers after them), so that the parent, a container, is never
 * empty while they are counted. Released and taken again in between, it could be reaped (every
 * 200 ms on the test servers), and each caller's create would then fail, create the parent and be
 * sent again: three creates where one was meant (6 instead of 2, seen in runs under load).
 */
function countedRun(connection: ZkConnection, make: (source: SessionSource) => LockRecipe) {
  return async (lockPath: string, callers: number, queued = 2) => {
    const { source, counts } = countingSessions(connection);
    const lock = make(source);
    const resource = lockPath.slice(lockPath.lastIndexOf('/') + 1);
    const first = await lock.acquire(resource);
    for (const key of Object.keys(counts)) counts[key as keyof typeof counts] = 0;
    const tokens = [first.fencingToken];
    let inside = 1;
    let most = 1;
    const rest = Array.from({ length: callers - 1 }, async () => {
      const held = await lock.acquire(resource);
      inside += 1;
      most = Math.max(most, inside);
      tokens.push(held.fencingToken);
      await tick();
      inside -= 1;
      await held.release();
    });
    await eventually(async () => (await childrenOf(connection, lockPath)).length >= queued, { what: `${queued} nodes under ${lockPath}` });
    inside -= 1;
    await first.release();
    await Promise.all(rest);
    return { tokens, most, counts };
  };
}

describe('the cohort queue: callers of one process share one ZooKeeper node, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  it('passes the lock between local callers without a request to ZooKeeper, one holder at a time, each with a higher token', async () => {
    const rootPath = uniqueRoot('cohort-local');
    const connection = await connect();
    const cohort = countedRun(connection, (source) => new CohortLock(new FairLock(source, { rootPath })));
    const { tokens, most, counts } = await cohort(`${rootPath}/hot`, 50);
    expect(most).toBe(1);
    expect(tokens).toHaveLength(50);
    expect([...tokens].sort()).toEqual(tokens); // granted in increasing token order
    expect(new Set(tokens).size).toBe(50);
    expect(BigInt(tokens[49]!)).toBeGreaterThan(BigInt(tokens[0]!));
    // One node for the forty-nine who came while the first held: the cohort's, formed when the
    // second came. Nobody else waited, so each handoff was local (every 16th looks at the queue).
    expect(counts.create).toBe(1);
    // Each node went with one request: the first's delete, and the cohort's (which queued behind
    // the first and so hands on) the transaction that writes and deletes it.
    expect(counts.delete + counts.multi).toBe(2);
    expect(await childrenOf(connection, `${rootPath}/hot`)).toEqual([]);
    // The control: without the cohort, each of the forty-nine queues a node of its own.
    const fair = countedRun(connection, (source) => new FairLock(source, { rootPath }));
    const control = await fair(`${rootPath}/hot`, 50, 50);
    expect(control.most).toBe(1);
    expect(control.counts.create).toBe(49);
  });

  it('a caller alone in the process takes a node of its own, as FairLock does, and every way it ends lets the next one be alone too', async () => {
    const rootPath = uniqueRoot('cohort-lone');
    const [a, b] = [await connect(), await connect()];
    const { source, counts } = countingSessions(b);
    const cohort = new CohortLock(new FairLock(source, { rootPath }));
    const held = await new FairLock(a, { rootPath }).acquire('r');
    await keepParent(a, `${rootPath}/r`);
    await expect(cohort.acquire('r', { waitTimeoutMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
    const controller = new AbortController();
    const aborted = cohort.acquire('r', { signal: controller.signal });
    await queueLength(a, `${rootPath}/r`, 3); // the holder, this waiter and the node that keeps the parent
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect(await cohort.tryAcquire('r')).toBeNull();
    await expect(cohort.acquire('r', { data: Buffer.alloc(2000) })).rejects.toBeInstanceOf(InvalidOptionsError);
    await held.release();
    // Had any of those left its claim on the resource behind, this caller would find the lock
    // "wanted in this process" and be told it is busy without asking ZooKeeper.
    for (const key of Object.keys(counts)) counts[key as keyof typeof counts] = 0;
    const alone = await cohort.tryAcquire('r');
    expect(alone).not.toBeNull();
    await alone!.release();
    // Exactly FairLock's requests: create and list in one round trip, then delete.
    expect(counts).toMatchObject({ create: 1, getChildren: 1, delete: 1 });
    expect(cohort.localWaiters('r')).toBe(0);
    expect(await childrenOf(a, `${rootPath}/r`)).toEqual([KEEP]);
  });

  it("gives the node back after maxHandoffs when another process's caller waits, and the rest queue behind it", async () => {
    const rootPath = uniqueRoot('cohort-bound');
    const [a, b, observer] = [await connect(), await connect(), await connect()];
    const local = new CohortLock(new FairLock(a, { rootPath }), { maxHandoffs: 2, maxHoldMs: 60_000 });
    const other = new FairLock(b, { rootPath });
    const order: string[] = [];
    const first = await local.acquire('r');
    order.push('a0');
    const locals = Array.from({ length: 6 }, (_, i) =>
      local.acquire('r').then(async (lock) => {
        order.push(`a${i + 1}`);
        await tick();
        await lock.release();
      }),
    );
    // a0's own node (it came alone), the cohort's (a1 formed it), then the other process's.
    await queueLength(observer, `${rootPath}/r`, 2);
    const remote = other.acquire('r').then(async (lock) => {
      order.push('b');
      await tick();
      await lock.release();
    });
    await queueLength(observer, `${rootPath}/r`, 3);
    await first.release();
    await Promise.all([...locals, remote]);
    // a0, then the cohort's a1 and two handoffs, then the other process; the remaining local callers after it.
    expect(order).toEqual(['a0', 'a1', 'a2', 'a3', 'b', 'a4', 'a5', 'a6']);
    expect(await childrenOf(observer, `${rootPath}/r`)).toEqual([]);
  });

  it('keeps handing off locally past the bounds while nobody else waits', async () => {
    const rootPath = uniqueRoot('cohort-alone');
    const connection = await connect();
    const cohort = countedRun(connection, (source) => new CohortLock(new FairLock(source, { rootPath }), { maxHandoffs: 1, maxHoldMs: 0 }));
    const { counts } = await cohort(`${rootPath}/r`, 10);
    // The cohort's node for the nine who came while the first held.
    expect(counts.create).toBe(1);
    // One listing with its create and one when the first node went (the cohort's node then holds),
    // then each of the cohort's eight handoffs, all past the bound, looked at the queue once.
    expect(counts.getChildren).toBe(2 + 8);
  });

  it('times out and aborts local waiters without disturbing the others, and leaves nothing behind', async () => {
    const rootPath = uniqueRoot('cohort-stop');
    const observer = await connect();
    const cohort = new CohortLock(new FairLock(await connect(), { rootPath }));
    const held = await cohort.acquire('r');
    const timedOut = cohort.acquire('r', { waitTimeoutMs: 50 }).catch((error: unknown) => error);
    const controller = new AbortController();
    const aborted = cohort.acquire('r', { signal: controller.signal }).catch((error: unknown) => error);
    const patient = cohort.acquire('r');
    expect(await cohort.tryAcquire('r')).toBeNull();
    await expect(cohort.acquire('r', { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await timedOut).toBeInstanceOf(LockTimeoutError);
    controller.abort();
    expect(await aborted).toBeInstanceOf(LockAbortedError);
    expect(cohort.localWaiters('r')).toBe(1);
    await held.release();
    const next = await patient;
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await next.release();
    expect(cohort.localWaiters('r')).toBe(0);
    expect(await childrenOf(observer, `${rootPath}/r`)).toEqual([]);
  });

  it("the last local caller to give up is answered only once the process's node is gone from ZooKeeper", async () => {
    const rootPath = uniqueRoot('cohort-last');
    const [a, b, observer] = [await connect(), await connect(), await connect()];
    const held = await new FairLock(a, { rootPath }).acquire('r');
    const cohort = new CohortLock(new FairLock(b, { rootPath }));
    await expect(cohort.acquire('r', { waitTimeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await childrenOf(observer, `${rootPath}/r`)).toHaveLength(1);
    const controller = new AbortController();
    const aborted = cohort.acquire('r', { signal: controller.signal });
    await queueLength(observer, `${rootPath}/r`, 2);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect(await childrenOf(observer, `${rootPath}/r`)).toHaveLength(1);
    await held.release();
  });

  it('a lost session tells the holder, and the local waiters queue again in the next session with higher tokens', async () => {
    const rootPath = uniqueRoot('cohort-lost');
    const connection = await connect();
    const cohort = new CohortLock(new FairLock(connection, { rootPath }));
    const held = await cohort.acquire('r');
    const waiters = [cohort.acquire('r'), cohort.acquire('r')];
    await expireSession(zk.connectString, connection.sessionCredentials()!);
    await eventually(() => held.signal.aborted, { what: 'the holder to hear of the loss' });
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    const second: GrantedLock = await waiters[0]!;
    expect(second.session.id).not.toBe(held.session.id);
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await second.release();
    const third = await waiters[1]!;
    expect(BigInt(third.fencingToken)).toBeGreaterThan(BigInt(second.fencingToken));
    await third.release();
  });

  it('a read downgraded under a write keeps local writers out until it is released', async () => {
    const rootPath = uniqueRoot('cohort-downgrade');
    const { locks } = await startLockApp(zk, { ...STEADY_SESSION, rootPath });
    const observer = await connect();
    let releaseRead!: () => Promise<void>;
    await runInNewLockContext(async () => {
      const write = await locks.acquire('doc', { mode: 'write' });
      const read = await locks.acquire('doc', { mode: 'read', waitTimeoutMs: 0 });
      releaseRead = () => read.release();
      // Another request of the same process wants the write while this one still holds it.
      let writerHolds = false;
      const writer = runInNewLockContext(async () => {
        const lock = await locks.acquire('doc', { mode: 'write' });
        writerHolds = true;
        return lock;
      }, () => 'second');
      await eventually(async () => (await locks.inspect('doc')).localWaiters === 1, { what: 'the local writer waiting' });
      await write.release();
      // The node went back to ZooKeeper instead of to the local writer: it now queues behind the read.
      await queueLength(observer, `${rootPath}/doc`, 2);
      expect(writerHolds).toBe(false);
      await releaseRead();
      await (await writer).release();
    }, () => 'first');
    expect(await childrenOf(observer, `${rootPath}/doc`)).toEqual([]);
  });

  it('LockService uses the cohort for exclusive locks by default, and not with cohort: false', async () => {
    const rootPath = uniqueRoot('cohort-option');
    const observer = await connect();
    // With the cohort: the holder's node (it came alone) and the cohort's, for both waiters.
    for (const [cohort, nodes] of [[undefined, 2], [false, 3]] as const) {
      const { locks }: { locks: LockService } = await startLockApp(zk, { ...STEADY_SESSION, rootPath, cohort });
      const held = await locks.acquire('r');
      const waiting = [locks.acquire('r'), locks.acquire('r')];
      if (nodes === 2) {
        await eventually(async () => (await locks.inspect('r')).localWaiters === 2, { what: 'local waiters' });
        const [overview] = (await locks.inspectAll()).locks;
        expect(overview).toMatchObject({ resource: 'r', localWaiters: 2 });
        expect(overview!.waiters).toHaveLength(1);
      }
      await queueLength(observer, `${rootPath}/r`, nodes);
      await held.release();
      for (const lock of waiting) await (await lock).release();
    }
  });
});

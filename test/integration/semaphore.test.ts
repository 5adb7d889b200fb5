import { describe, expect, it, vi } from 'vitest';
import { IncompatibleLockError, LockAbortedError, LockLostError, LockTimeoutError } from '../../lib/errors.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { Semaphore } from '../../lib/recipes/semaphore.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { childrenOf, countingSessions, eventually, expireSession, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const sequenceOf = (lock: GrantedLock): number => Number(lock.path.slice(-10));

describe('semaphore on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  // Nothing here waits for a session to time out (expiry is forced): a lease a busy machine cannot
  // run out, so that no connection drops, no re-read is added to the counts, no waiter queues again.
  const connect = useConnections(zk, STEADY_SESSION);

  async function clients(count: number, rootPath: string, permits: number) {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const connection = await connect();
        const counting = countingSessions(connection);
        return { connection, semaphore: new Semaphore(counting.source, { rootPath, permits }), counts: counting.counts };
      }),
    );
  }

  it('never has more than `permits` holders, and does reach that many, over many rounds from six clients', async () => {
    const root = uniqueRoot('sem');
    const all = await clients(6, root, 3);
    let holding = 0;
    let most = 0;
    const grants: number[] = [];
    // The first holders keep their lease until all three permits are taken, so reaching three does not
    // depend on how fast a busy machine runs (a semaphore that let only two in would never get there).
    let allTaken!: () => void;
    const full = new Promise<void>((resolve) => (allTaken = resolve));
    await Promise.all(
      all.map(async (client, c) => {
        for (let i = 0; i < 15; i++) {
          const lease = await client.semaphore.acquire('pool');
          holding += 1;
          most = Math.max(most, holding);
          if (holding === 3) allTaken();
          if (i === 0) await full;
          grants.push(sequenceOf(lease));
          await new Promise((r) => setTimeout(r, (c + i) % 4));
          holding -= 1;
          await lease.release();
        }
      }),
    );
    expect(most).toBe(3);
    expect(grants).toHaveLength(90);
    expect(await childrenOf(all[0]!.connection, `${root}/pool`)).toEqual([]);
  });

  it('serves waiters first come, first served, waking one waiter that can proceed per release', async () => {
    const root = uniqueRoot('semfifo');
    const [h1, h2, ...waiting] = await clients(7, root, 2);
    const holders = [await h1!.semaphore.acquire('pool'), await h2!.semaphore.acquire('pool')];
    const order: number[] = [];
    const leases: Promise<GrantedLock>[] = [];
    for (const [i, client] of waiting.entries()) {
      leases.push(
        client.semaphore.acquire('pool').then((lease) => {
          order.push(i);
          return lease;
        }),
      );
      await queueLength(h1!.connection, `${root}/pool`, 3 + i);
    }
    // Every waiter asleep: it read the queue, then watched the two holders (the first waiter) or
    // the waiter before it (the others).
    await asleep(waiting, [2, 1, 1, 1, 1]);
    const reads = (): number[] => waiting.map((client) => client.counts.getChildren);
    const woken = (after: number[], from: number[]): number[] => after.map((n, i) => n - from[i]!);
    const before = reads();
    await holders[1]!.release(); // the second holder goes first: out of order on purpose
    const first = await leases[0]!;
    // The one behind it, poked, read the queue and went back to sleep watching the two holders.
    // Counted at the call: waiting for that count alone could take a re-read still on its way for
    // one that saw the release to come (it would then wake at the next release without a re-read).
    await asleep(waiting, [2, 3, 1, 1, 1]);
    await roundTrips(waiting);
    // The waiter let in re-read the queue once; the one behind it once more (it moves its watch to
    // the holders); nobody else woke.
    expect(woken(reads(), before)).toEqual([1, 1, 0, 0, 0]);
    const middle = reads();
    await holders[0]!.release();
    const second = await leases[1]!;
    await asleep(waiting, [2, 3, 3, 1, 1]);
    await roundTrips(waiting);
    expect(woken(reads(), middle)).toEqual([0, 1, 1, 0, 0]);
    expect(waiting.map((client) => client.counts.watchNode)).toEqual([2, 3, 3, 1, 1]);
    for (const lease of [first, second]) await lease.release();
    for (const lease of leases.slice(2)) await (await lease).release();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(await childrenOf(h1!.connection, `${root}/pool`)).toEqual([]);
  });

  it('lets the waiters behind a waiter that timed out or was aborted in, leaving no node of theirs', async () => {
    const root = uniqueRoot('semleave');
    const [h, w1, w2, w3] = await clients(4, root, 1);
    const held = await h!.semaphore.acquire('pool');
    // Its timeout runs out when the test says, once the others queued behind it: with a real 400 ms
    // timer, a loaded machine timed it out while they were still queueing (its rejection then came
    // before anything handled it, or the queue never reached the lengths waited for).
    const { started: first, expire } = withHeldTimeout(400, () => w1!.semaphore.acquire('pool', { waitTimeoutMs: 400 }));
    await queueLength(h!.connection, `${root}/pool`, 2);
    const controller = new AbortController();
    const second = w2!.semaphore.acquire('pool', { signal: controller.signal });
    await queueLength(h!.connection, `${root}/pool`, 3);
    const third = w3!.semaphore.acquire('pool');
    await queueLength(h!.connection, `${root}/pool`, 4);
    controller.abort();
    await expect(second).rejects.toBeInstanceOf(LockAbortedError);
    expire();
    await expect(first).rejects.toBeInstanceOf(LockTimeoutError);
    await queueLength(h!.connection, `${root}/pool`, 2);
    await held.release();
    await (await third).release();
    expect(await childrenOf(h!.connection, `${root}/pool`)).toEqual([]);
  });

  it('refuses a holder that disagrees about the permits, leaving nothing behind', async () => {
    const root = uniqueRoot('semmismatch');
    const [a, b] = await clients(2, root, 3);
    const lease = await a!.semaphore.acquire('pool');
    const other = new Semaphore(b!.connection, { rootPath: root, permits: 5 });
    await expect(other.acquire('pool')).rejects.toThrow(IncompatibleLockError);
    await expect(other.acquire('pool')).rejects.toThrow(/asks for 5 permits .* uses 3/);
    await expect(new FairLock(b!.connection, { rootPath: root }).acquire('pool')).rejects.toThrow(/semaphore/);
    expect(await childrenOf(a!.connection, `${root}/pool`)).toHaveLength(1);
    await lease.release();
  });

  it('lets a lease die with its session, and the next waiter in', async () => {
    const root = uniqueRoot('semexpire');
    const [a, b] = await clients(2, root, 1);
    const lease = await a!.semaphore.acquire('pool');
    const next = b!.semaphore.acquire('pool');
    await queueLength(a!.connection, `${root}/pool`, 2);
    const lost = new Promise<unknown>((resolve) => lease.signal.addEventListener('abort', () => resolve(lease.signal.reason)));
    await expireSession(zk.connectString, a!.connection.sessionCredentials()!);
    expect(await lost).toBeInstanceOf(LockLostError);
    const taken = await next;
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(lease.fencingToken));
    await taken.release();
  });
});

type Client = { connection: ZkConnection; counts: { getChildren: number; watchNode: number } };

/**
 * Waits until each client has set at least `watches[i]` watches in all: a waiter sets them after
 * the answer to its listing, so the listing it acted on is known to be read.
 */
async function asleep(clients: readonly Client[], watches: readonly number[]): Promise<void> {
  await eventually(() => clients.every((client, i) => client.counts.watchNode >= watches[i]!), {
    what: `watches set ${watches.join()} (seen ${clients.map((client) => client.counts.watchNode).join()})`,
  });
}

/**
 * A round trip on each client's session: ZooKeeper delivers a session's watch events before the
 * answer to any request sent after them, so a wake caused by what happened so far has been
 * counted (a woken waiter sends its re-read in the same turn as the event).
 */
async function roundTrips(clients: readonly Client[]): Promise<void> {
  for (const client of clients) await (await client.connection.session()).getData('/');
}

/**
 * Runs `start` (an acquire with `waitTimeoutMs`) with the timer of that timeout held by the test:
 * `expire()` runs the timer's own callback, so the acquire times out as it would, but when the test
 * says. Fails at once if `start` set no timer of that length.
 */
function withHeldTimeout<T>(waitTimeoutMs: number, start: () => T): { started: T; expire: () => void } {
  const realSetTimeout = globalThis.setTimeout;
  let held: (() => void) | undefined;
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
    if (held || ms !== waitTimeoutMs) return realSetTimeout(callback, ms);
    held = callback;
    // A real handle, for the clearTimeout of an acquire that ends otherwise; it never fires by itself.
    return realSetTimeout(() => undefined, 2 ** 31 - 1).unref();
  }) as typeof setTimeout);
  let started: T;
  try {
    started = start();
  } finally {
    spy.mockRestore();
  }
  const timeout = held;
  if (!timeout) throw new Error(`the acquire set no ${waitTimeoutMs} ms timer: this test no longer controls its timeout`);
  return { started, expire: () => timeout() };
}

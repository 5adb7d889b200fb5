import { describe, expect, it } from 'vitest';
import { LockTimeoutError } from '../../lib/errors.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import type { LockHandle } from '../../lib/recipes/lock-handle.js';
import { ReadWriteLock } from '../../lib/recipes/read-write-lock.js';
import { childrenOf, countingSessions, eventually, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, watchesByPath } from '../support/zk-fixtures.js';

type Mode = 'read' | 'write';
const sequenceOf = (lock: LockHandle): number => Number((lock as GrantedLock).path.slice(-10));
/**
 * Where a node stands in the resource's history: its queue's incarnation (the parent's czxid), then
 * its sequence. A parent emptied and reaped between two grants (a container, reaped every 200 ms on
 * the test server) is made again with sequences from 0: those nodes come after every older one.
 */
const placeOf = (lock: LockHandle): bigint => (BigInt((lock as GrantedLock).queueId) << 32n) + BigInt(sequenceOf(lock));

describe('read/write lock on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  // Nothing here is about sessions ending: a lease a busy machine cannot run out, so that no
  // connection drops and no re-read is added to the counts these tests make.
  const connect = useConnections(zk, STEADY_SESSION);

  async function clients(count: number, rootPath: string) {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const connection = await connect();
        const counting = countingSessions(connection);
        return { connection, lock: new ReadWriteLock(counting.source, { rootPath }), counts: counting.counts };
      }),
    );
  }

  it('never lets a writer hold alongside anyone, over a random mix of readers and writers from five clients', async () => {
    const root = uniqueRoot('rwmix');
    const all = await clients(5, root);
    // Seeded, so a failure can be replayed.
    let seed = 12345;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const events: { type: 'grant' | 'release'; mode: Mode; sequence: number; place: bigint }[] = [];
    let readers = 0;
    let writers = 0;
    let maxReaders = 0;
    let timeouts = 0;
    let downgrades = 0;
    const violations: string[] = [];
    await Promise.all(
      all.map(async (client, c) => {
        for (let i = 0; i < 24; i++) {
          const mode: Mode = random() < 0.7 ? 'read' : 'write';
          // Some acquires give up early, leaving gaps in the middle of the queue.
          const waitTimeoutMs = random() < 0.2 ? 1 + random() * 5 : undefined;
          let lock: GrantedLock;
          try {
            lock = (await client.lock[mode].acquire('doc', { waitTimeoutMs })) as GrantedLock;
          } catch (error) {
            if (!(error instanceof LockTimeoutError)) throw error;
            timeouts += 1;
            continue;
          }
          if (mode === 'write' && (readers > 0 || writers > 0)) violations.push(`client ${c} write with ${readers}r/${writers}w`);
          if (mode === 'read' && writers > 0) violations.push(`client ${c} read with a writer`);
          if (mode === 'read') readers += 1;
          else writers += 1;
          maxReaders = Math.max(maxReaders, readers);
          events.push({ type: 'grant', mode, sequence: sequenceOf(lock), place: placeOf(lock) });
          await new Promise((r) => setTimeout(r, random() * 4));
          if (mode === 'write' && random() < 0.3) {
            // Downgrade: take the read under the write, let the write go, keep reading a while.
            const read = await client.lock.downgrade(lock);
            readers += 1;
            writers -= 1;
            events.push({ type: 'release', mode, sequence: sequenceOf(lock), place: placeOf(lock) });
            await lock.release();
            downgrades += 1;
            await new Promise((r) => setTimeout(r, random() * 4));
            readers -= 1;
            await read.release();
            continue;
          }
          if (mode === 'read') readers -= 1;
          else writers -= 1;
          events.push({ type: 'release', mode, sequence: sequenceOf(lock), place: placeOf(lock) });
          await lock.release();
        }
      }),
    );
    expect(violations).toEqual([]);
    expect(events.filter((e) => e.type === 'grant')).toHaveLength(5 * 24 - timeouts);
    expect(downgrades).toBeGreaterThan(0);
    expect(maxReaders).toBeGreaterThan(1); // readers did overlap
    // First come, first served: whenever a write is involved, the lower sequence was granted first.
    const grants = events.filter((e) => e.type === 'grant');
    for (const [i, a] of grants.entries()) {
      for (const b of grants.slice(i + 1)) {
        if (a.mode === 'read' && b.mode === 'read') continue;
        expect(b.place > a.place, `${b.mode} #${b.sequence} was granted after ${a.mode} #${a.sequence} (queues ${b.place >> 32n}, ${a.place >> 32n})`).toBe(true);
      }
    }
    expect(await childrenOf(all[0]!.connection, `${root}/doc`)).toEqual([]);
  });

  it('lets readers overlap, and makes a queued writer hold back the readers that came after it', async () => {
    const root = uniqueRoot('rwfifo');
    const [a, b, c, d] = await clients(4, root);
    const r1 = await a!.lock.read.acquire('doc');
    const r2 = await b!.lock.read.acquire('doc'); // overlaps r1
    let writerHolds = false;
    const writer = c!.lock.write.acquire('doc').then((lock) => {
      writerHolds = true;
      return lock;
    });
    await queueLength(a!.connection, `${root}/doc`, 3);
    // A reader arriving after the queued writer waits, though only readers hold.
    await expect(d!.lock.read.acquire('doc', { waitTimeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await d!.lock.read.tryAcquire('doc')).toBeNull();
    const lateReader = d!.lock.read.acquire('doc');
    await queueLength(a!.connection, `${root}/doc`, 4);
    await r1.release();
    expect(writerHolds).toBe(false);
    await r2.release();
    const w = await writer;
    expect(BigInt(w.fencingToken)).toBeGreaterThan(BigInt(r2.fencingToken));
    await w.release();
    const late = await lateReader;
    await late.release();
    expect(await childrenOf(a!.connection, `${root}/doc`)).toEqual([]);
  });

  it("wakes only the readers a writer's release lets in, and a later writer only when the node below it goes", async () => {
    const root = uniqueRoot('rwherd');
    const [holder, r1, r2, r3, w2, r4] = await clients(6, root);
    const first = await holder!.lock.write.acquire('doc');
    const readers = [r1!, r2!, r3!].map((client) => client.lock.read.acquire('doc'));
    await queueLength(holder!.connection, `${root}/doc`, 4);
    const secondWriter = w2!.lock.write.acquire('doc');
    await queueLength(holder!.connection, `${root}/doc`, 5);
    const lastReader = r4!.lock.read.acquire('doc');
    await queueLength(holder!.connection, `${root}/doc`, 6);
    // The three readers watch the first write; the second writer watches the third reader; the last reader the second writer.
    const nodes = (await childrenOf(holder!.connection, `${root}/doc`)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    const watchCounts = async (): Promise<number[]> => {
      const watches = await watchesByPath(zk.connectString);
      return nodes.map((n) => watches.get(`${root}/doc/${n}`) ?? 0);
    };
    await eventually(async () => (await watchCounts()).join() === '3,0,0,1,1,0', { what: 'the watches to be set' });
    expect(await watchCounts()).toEqual([3, 0, 0, 1, 1, 0]);
    const before = [r1!, r2!, r3!, w2!, r4!].map((client) => client.counts.getChildren);
    await first.release();
    const held = (await Promise.all(readers)).sort((x, y) => sequenceOf(x) - sequenceOf(y));
    for (const client of [w2!, r4!]) await (await client.connection.session()).getData(root);
    const after = [r1!, r2!, r3!, w2!, r4!].map((client) => client.counts.getChildren);
    expect(after.map((n, i) => n - before[i]!)).toEqual([1, 1, 1, 0, 0]);
    await held[0]!.release();
    await held[1]!.release();
    // A round trip on the writer's own session: a watch event caused by those deletes would reach
    // it before this answer does (ZooKeeper's ordering guarantee), and its re-read would be counted.
    await (await w2!.connection.session()).getData(root);
    expect(w2!.counts.getChildren).toBe(after[3]); // still asleep: the reader just below it holds
    await held[2]!.release();
    const w = await secondWriter;
    expect(w2!.counts.getChildren).toBe(after[3]! + 1);
    await w.release();
    await (await lastReader).release();
  });
});

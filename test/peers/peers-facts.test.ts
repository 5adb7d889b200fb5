/**
 * What Apache Curator (5.4, Debian bookworm) and kazoo (2.8) do to each other on one lock path, with
 * the real libraries: the facts the polyglot docs state, pinned so they stay true. No code of ours
 * takes a lock or leads here; our ZooKeeper client only sets up and reads the server.
 */
import { describe, expect, it } from 'vitest';
import { fourLetterTo, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, exists } from '../support/zk-fixtures.js';
import { usePeer, type PendingAcquire, type PeerWorker } from '../support/peers.js';

describe('Curator and kazoo peers on one lock or election path', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const curator = usePeer('curator');
  const kazoo = usePeer('kazoo');

  const javaWorker = (name: string) => curator.peer.worker(name, zk.connectString);
  const pythonWorker = (name: string) => kazoo.peer.worker(name, zk.connectString);

  /**
   * A fresh `<root>/lock`, created PERSISTENT here. Left to Curator it would be a container, which the
   * test server reaps within 200 ms of being empty, and kazoo 2.8's Lock fails with NoNodeError when
   * that reap falls between its ensure_path and its create (about once in 400 acquisitions here):
   * a real hazard of the mix, but not the fact these tests pin.
   */
  async function lockRoot(name: string): Promise<string> {
    const root = uniqueRoot(name);
    const session = await (await connect()).session();
    await session.create(root, '', 'PERSISTENT');
    await session.create(`${root}/lock`, '', 'PERSISTENT');
    return root;
  }

  /** Waits until `worker`'s session watches `node` (it has decided to wait on it). */
  const watches = (worker: PeerWorker, node: string) =>
    eventually(async () => (await watchersByPath(zk.connectString)).get(node)?.has(BigInt(worker.sessionId)), { what: `${worker.name} to watch ${node}` });

  /**
   * `waiter` queues behind `holder`, decides to wait (it watches the holder's node), is not granted,
   * and is granted once `holder` releases.
   */
  async function waitsFor(holder: PeerWorker, holderNode: string, waiter: PeerWorker, kind: string, path: string, ...options: string[]): Promise<string> {
    const pending = waiter.startAcquire(kind, path, ...options);
    await pending.queued;
    await watches(waiter, holderNode);
    expect(pending.decided).toBeUndefined();
    await holder.release();
    const outcome = await pending.outcome;
    if (!outcome.acquired) throw new Error(`${waiter.name}: ${outcome.reason}`);
    return outcome.node;
  }

  it('Curator creates a missing lock path as containers, reaped once empty; kazoo as persistent nodes', async () => {
    const root = await lockRoot('parents');
    const [java, python] = await Promise.all([javaWorker('j1'), pythonWorker('p1')]);
    await python.acquire('lock', `${root}/kazoo/lock`);
    await java.acquire('mutex', `${root}/curator/lock`);
    await python.release();
    await java.release();
    // The server reaps empty containers every 200 ms, leaf first; persistent nodes are never candidates,
    // so once Curator's ancestors are gone, a reap has passed over kazoo's empty ones too.
    const connection = await connect();
    await eventually(async () => !(await exists(connection, `${root}/curator`)), { what: "Curator's lock path to be reaped" });
    expect(await exists(connection, `${root}/kazoo/lock`)).toBe(true);
  });

  it('a Curator InterProcessMutex and a default kazoo Lock both hold at once, whichever comes first', async () => {
    const path = `${await lockRoot('mutex-kazoo')}/lock`;
    const [java, python] = await Promise.all([javaWorker('j1'), pythonWorker('p1')]);
    // Curator sorts kazoo's `<hex>__lock__<seq>` by its whole name (no `lock-` in it), after its own
    // `0000000000` key; kazoo's pattern `__lock__` does not see Curator's `_c_<uuid>-lock-<seq>`.
    // Each second holder is granted on its first look (timeout=0), the first still holding.
    expect(await java.acquire('mutex', path)).toMatch(/\/_c_[0-9a-f-]{36}-lock-0000000000$/);
    expect(await python.tryAcquire('lock', path)).toMatch(/\/[0-9a-f]{32}__lock__0000000001$/);
    await Promise.all([java.release(), python.release()]);

    await python.acquire('lock', path);
    expect(await java.tryAcquire('mutex', path)).toBeDefined();
  });

  it("kazoo's extra_lock_patterns=['-lock-'] makes kazoo wait for Curator, but not Curator for kazoo", async () => {
    const path = `${await lockRoot('mutex-kazoo-extra')}/lock`;
    const [java, python] = await Promise.all([javaWorker('j1'), pythonWorker('p1')]);
    // kazoo now matches `-lock-<seq>` too, so it sees Curator's node before its own and waits.
    const javaNode = await java.acquire('mutex', path);
    await waitsFor(java, javaNode, python, 'lock', path, 'extra=-lock-');
    // Curator still sorts kazoo's `__lock__` node by its whole name, after its own: it is granted on
    // its first look while kazoo holds.
    expect(await java.tryAcquire('mutex', path)).toBeDefined();
  });

  it('a Curator mutex and the write lock of a Curator InterProcessReadWriteLock both hold at once, whichever comes first', async () => {
    const path = `${await lockRoot('mutex-rw')}/lock`;
    const [first, second] = await Promise.all([javaWorker('j1'), javaWorker('j2')]);
    // The write lock sorts the mutex's `_c_…-lock-…` by its whole name (no `__READ__`/`__WRIT__`),
    // after its own key; the mutex sorts `_c_…-__WRIT__<seq>` by its whole name (no `lock-`).
    await first.acquire('mutex', path);
    expect(await second.tryAcquire('write', path)).toMatch(/-__WRIT__0000000001$/);
    await Promise.all([first.release(), second.release()]);

    await first.acquire('write', path);
    expect(await second.tryAcquire('mutex', path)).toBeDefined();
  });

  it('a kazoo Lock subclass naming its nodes `<hex>-lock-<seq>` and a Curator mutex exclude each other', async () => {
    const path = `${await lockRoot('mutex-subclass')}/lock`;
    const [java, python] = await Promise.all([javaWorker('j1'), pythonWorker('p1')]);

    const javaNode = await java.acquire('mutex', path);
    expect(await python.tryAcquire('curator-lock', path)).toBeUndefined();
    const pythonNode = await waitsFor(java, javaNode, python, 'curator-lock', path);
    expect(pythonNode).toMatch(/\/[0-9a-f]{32}-lock-\d{10}$/);

    // Another session tries: Curator's acquire(0 ms) sets its watch on the predecessor before it
    // looks at the time, so the try leaves a watch on the holder's node.
    const other = await javaWorker('j2');
    expect(await other.tryAcquire('mutex', path)).toBeUndefined();
    await waitsFor(python, pythonNode, java, 'mutex', path);
    await java.release();
  });

  it('Curator mutex and kazoo subclass workers incrementing one counter under one path: no lost update, no overlap', async () => {
    const root = await lockRoot('increment');
    const paths = { lock: `${root}/lock`, counter: `${root}/counter`, inside: `${root}/inside` };
    const session = await (await connect()).session();
    await session.create(paths.counter, '0', 'PERSISTENT');
    const perWorker = 15;
    const workers = await Promise.all([
      ...['j1', 'j2', 'j3'].map(async (name) => ({ kind: 'mutex', worker: await javaWorker(name) })),
      ...['p1', 'p2', 'p3'].map(async (name) => ({ kind: 'curator-lock', worker: await pythonWorker(name) })),
    ]);
    const runs = await Promise.all(workers.map(({ kind, worker }) => worker.increment(kind, paths, perWorker)));
    expect(runs.map((run) => run.overlaps)).toEqual([0, 0, 0, 0, 0, 0]);
    expect((await session.getData(paths.counter)).data.toString()).toBe(String(workers.length * perWorker));
  });

  /** The last segment of a node path. */
  const nameOf = (node: string) => node.slice(node.lastIndexOf('/') + 1);

  it('two Curator LeaderLatch workers on one path: the first leads, the second once the first unlatches', async () => {
    const root = await lockRoot('latch');
    const path = `${root}/lock`;
    const inside = `${root}/inside`;
    const connection = await connect();
    const session = await connection.session();
    const [a, b] = await Promise.all([javaWorker('j1'), javaWorker('j2')]);

    const first = a.startLatch(path, { id: 'first', inside });
    const firstNode = await first.queued;
    // LeaderLatch creates `latch-` with protection: `_c_<uuid>-latch-<seq>`, its data the id.
    expect(nameOf(firstNode)).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);
    expect((await session.getData(firstNode)).data.toString()).toBe('first');
    expect(await first.leader).toEqual({ overlap: false });
    expect(await exists(connection, inside)).toBe(true);

    const second = b.startLatch(path, { id: 'second', inside });
    const secondNode = await second.queued;
    expect(nameOf(secondNode)).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);
    expect((await session.getData(secondNode)).data.toString()).toBe('second');
    await watches(b, firstNode); // it has decided to wait: it watches the node before its own
    expect(second.isLeader).toBe(false);
    // getParticipants: in the latch's order, leader first (a fresh, unstarted LeaderLatch reads it).
    expect(await b.participants(path)).toEqual(['first', 'second']);

    // close(NOTIFY_LEADER): notLeader first; the node is deleted in the background, gone by UNLATCHED.
    expect(await a.unlatch()).toEqual({ wasLeader: true });
    expect(await exists(connection, firstNode)).toBe(false);
    expect(await second.leader).toEqual({ overlap: false });
    expect(await a.participants(path)).toEqual(['second']);
    expect(await b.unlatch()).toEqual({ wasLeader: true });
    expect(await exists(connection, inside)).toBe(false);
    expect(await a.participants(path)).toEqual([]);
  });

  it("a kazoo Election's node is its Lock's `<hex>__lock__<seq>`, and contenders() lists ids in join order", async () => {
    const path = `${await lockRoot('election')}/lock`;
    const session = await (await connect()).session();
    const workers = await Promise.all([pythonWorker('p1'), pythonWorker('p2'), pythonWorker('p3')]);
    const ids = ['one', 'two', 'three'];
    const pending = [];
    for (const [i, worker] of workers.entries()) {
      // Each joins once the one before it has its node: the join order is known.
      const latch = worker.startLatch(path, { id: ids[i]! });
      const node = await latch.queued;
      expect(nameOf(node)).toMatch(/^[0-9a-f]{32}__lock__\d{10}$/);
      expect((await session.getData(node)).data.toString()).toBe(ids[i]);
      pending.push({ latch, node });
    }
    await pending[0]!.latch.leader;
    await watches(workers[2]!, pending[1]!.node);
    expect(pending.map(({ latch }) => latch.isLeader)).toEqual([true, false, false]);
    expect(await workers[0]!.participants(path)).toEqual(['one', 'two', 'three']);

    // A contender that is not leading leaves: cancel(); the next in line is unchanged.
    expect(await workers[1]!.unlatch()).toEqual({ wasLeader: false });
    await expect(pending[1]!.latch.leader).rejects.toThrow(/stopped waiting/);
    expect(await workers[0]!.participants(path)).toEqual(['one', 'three']);
    expect(await workers[0]!.unlatch()).toEqual({ wasLeader: true });
    await pending[2]!.latch.leader;
    expect(await workers[0]!.participants(path)).toEqual(['three']);
  });

  it('a Curator LeaderLatch and an InterProcessMutex on one path both lead / hold at once, whichever comes first', async () => {
    const path = `${await lockRoot('latch-mutex')}/lock`;
    const [a, b] = await Promise.all([javaWorker('j1'), javaWorker('j2')]);
    // The latch sorts the mutex's `_c_…-lock-<seq>` by its whole name (no `latch-` in it), after its
    // own sequence; the mutex sorts `_c_…-latch-<seq>` by its whole name (no `lock-`), after its own.
    expect(await a.acquire('mutex', path)).toMatch(/\/_c_[0-9a-f-]{36}-lock-0000000000$/);
    expect(nameOf(await b.lead(path, { id: 'latch' }))).toMatch(/-latch-0000000001$/);
    await Promise.all([a.release(), b.unlatch()]);

    await b.lead(path, { id: 'latch' });
    expect(await a.tryAcquire('mutex', path)).toMatch(/-lock-\d{10}$/);
  });

  it("a kazoo Election does not see a Curator LeaderLatch's nodes: both lead on one path", async () => {
    const path = `${await lockRoot('latch-election')}/lock`;
    const [java, python] = await Promise.all([javaWorker('j1'), pythonWorker('p1')]);
    // kazoo counts only children matching `__lock__\d{10}$`, so it leads alongside Curator's leader;
    // Curator's leader, once it leads, watches nothing and is not told of kazoo's node.
    await java.lead(path, { id: 'curator' });
    await python.lead(path, { id: 'kazoo' });
    expect(await python.participants(path)).toEqual(['kazoo']);
  });

  it('three Curator mutex workers queued one after another are granted in queue order', async () => {
    const path = `${await lockRoot('fifo')}/lock`;
    const [a, b, c] = await Promise.all([javaWorker('j1'), javaWorker('j2'), javaWorker('j3')]);
    await a.acquire('mutex', path);
    const granted: string[] = [];
    const queue: PendingAcquire[] = [];
    for (const worker of [b, c]) {
      // Each starts only once the one before it has its node: the queue order is known.
      const pending = worker.startAcquire('mutex', path);
      void pending.outcome.then(() => granted.push(worker.name));
      await pending.queued;
      queue.push(pending);
    }
    await a.release();
    await queue[0]!.outcome;
    expect(granted).toEqual(['j2']);
    expect(queue[1]!.decided).toBeUndefined();
    await b.release();
    await queue[1]!.outcome;
    expect(granted).toEqual(['j2', 'j3']);
  });
});

/** The sessions watching each path (`wchp`). */
async function watchersByPath(connectString: string): Promise<Map<string, Set<bigint>>> {
  const watchers = new Map<string, Set<bigint>>();
  let current: Set<bigint> | undefined;
  for (const line of (await fourLetterTo(connectString, 'wchp')).split('\n')) {
    if (line.startsWith('/')) watchers.set(line.trim(), (current = new Set()));
    else if (current && /^\s+0x[0-9a-f]+\s*$/.test(line)) current.add(BigInt(line.trim()));
  }
  return watchers;
}

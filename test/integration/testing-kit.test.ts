/**
 * The testing kit's promise: a LockService on the in-memory ZooKeeper behaves as one on a real server.
 * The same checks run against both; each would fail on a backend that broke the behaviour.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import { LockAbortedError, LockLostError, LockService, LockTimeoutError, type LockHandle } from '../../lib/index.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import { InMemoryZooKeeper, expireSession } from '../../lib/testing/index.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { childrenOf, eventually, STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

/** One LockService with its own session, and the way to expire that session. */
interface Client {
  readonly locks: LockService;
  expire(): Promise<void>;
}

interface Backend {
  /** A new client (own session) on the backend. */
  client(rootPath: string): Promise<Client>;
  /** Children of a path, [] when it does not exist. */
  children(path: string): Promise<string[]>;
}

/**
 * Steady sessions: the tests that end one do it with expireSession, and a loaded machine must not run
 * out a short lease (and lose the lock) in a test about something else.
 */
function realServer(): Backend {
  const zk = useZooKeeper();
  const open: { locks: LockService; connection: ZkConnection }[] = [];
  let observer: ZkConnection | undefined;
  afterEach(async () => {
    for (const { locks, connection } of open.splice(0)) {
      await locks.onApplicationShutdown();
      connection.close();
    }
    observer?.close();
    observer = undefined;
  });
  return {
    async client(rootPath) {
      const connection = new ZkConnection({ connectionString: zk.connectString, ...STEADY_SESSION });
      const locks = new LockService({ connection, rootPath, rootAclCheck: 'off', logEvents: false });
      open.push({ locks, connection });
      await locks.onModuleInit();
      return { locks, expire: () => expireSession(connection) };
    },
    async children(path) {
      if (!observer) {
        observer = new ZkConnection({ connectionString: zk.connectString, ...STEADY_SESSION });
        await observer.connect();
      }
      return childrenOf(observer, path);
    },
  };
}

function inMemory(): Backend {
  let zookeeper = new InMemoryZooKeeper();
  afterEach(async () => {
    await zookeeper.close();
    zookeeper = new InMemoryZooKeeper();
  });
  return {
    async client(rootPath) {
      const locks = await zookeeper.createLockService({ rootPath, logEvents: false });
      return { locks, expire: async () => zookeeper.expireSession(locks) };
    },
    async children(path) {
      return zookeeper.getChildren(path);
    },
  };
}

describe.each([
  ['a real ZooKeeper server', realServer],
  ['the in-memory ZooKeeper', inMemory],
])('LockService on %s', (_name, makeBackend) => {
  const backend = makeBackend();

  async function clients(count: number, name: string): Promise<{ root: string; all: Client[] }> {
    const root = uniqueRoot(name);
    const all: Client[] = [];
    for (let i = 0; i < count; i++) all.push(await backend.client(root));
    return { root, all };
  }

  /** Waits until `resource` has this many nodes (holders and waiters) in ZooKeeper. */
  function queued(root: string, resource: string, count: number): Promise<boolean> {
    return eventually(async () => (await backend.children(`${root}/${resource}`)).length === count, { what: `${count} nodes of ${resource}` });
  }

  function nothingLeft(root: string, resource: string): Promise<boolean> {
    return queued(root, resource, 0);
  }

  it('excludes: while one holds, tryAcquire elsewhere is null and acquire waits until the release', async () => {
    const { root, all: [a, b] } = await clients(2, 'exclusion');
    const held = await a!.locks.acquire('r');
    expect(await b!.locks.tryAcquire('r')).toBeNull();
    let granted = false;
    const waiting = b!.locks.acquire('r').then((handle) => {
      granted = true;
      return handle;
    });
    await queued(root, 'r', 2);
    expect(granted).toBe(false);
    await held.release();
    const next = await waiting;
    expect(next.isHeld()).toBe(true);
    await next.release();
    await nothingLeft(root, 'r');
  });

  it('grants waiters in the order they queued', async () => {
    const { root, all } = await clients(4, 'fifo');
    const held = await all[0]!.locks.acquire('r');
    const order: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 1; i <= 3; i++) {
      waits.push(
        all[i]!.locks.acquire('r').then(async (handle) => {
          order.push(i);
          await handle.release();
        }),
      );
      await queued(root, 'r', i + 1);
    }
    await held.release();
    await Promise.all(waits);
    expect(order).toEqual([1, 2, 3]);
    await nothingLeft(root, 'r');
  });

  it('is reentrant within a lock context, and released with the outermost holder', async () => {
    const { root, all: [a, b] } = await clients(2, 'reentrant');
    await runInNewLockContext(async () => {
      const outer = await a!.locks.acquire('r');
      const inner = await a!.locks.acquire('r', { waitTimeoutMs: 0 });
      expect(inner.fencingToken).toBe(outer.fencingToken);
      expect(await backend.children(`${root}/r`)).toHaveLength(1);
      await inner.release();
      expect(await b!.locks.tryAcquire('r')).toBeNull();
      await outer.release();
    });
    const after = await b!.locks.tryAcquire('r');
    expect(after).not.toBeNull();
    await after!.release();
    await nothingLeft(root, 'r');
  });

  it('times out with LockTimeoutError, and aborts with LockAbortedError, leaving only the holder', async () => {
    const { root, all: [a, b] } = await clients(2, 'give-up');
    const held = await a!.locks.acquire('r');
    await expect(b!.locks.acquire('r', { waitTimeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await backend.children(`${root}/r`)).toHaveLength(1);
    const controller = new AbortController();
    const aborted = b!.locks.acquire('r', { signal: controller.signal });
    await queued(root, 'r', 2);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect(await backend.children(`${root}/r`)).toHaveLength(1);
    await held.release();
    await nothingLeft(root, 'r');
  });

  it('lets readers overlap, makes a writer wait for them, and queues later readers behind the writer', async () => {
    const { root, all: [a, b, c, d] } = await clients(4, 'rw');
    const read1 = await a!.locks.acquire('r', { mode: 'read' });
    const read2 = await b!.locks.acquire('r', { mode: 'read' });
    let written = false;
    const write = c!.locks.acquire('r', { mode: 'write' }).then((handle) => {
      written = true;
      return handle;
    });
    await queued(root, 'r', 3);
    expect(await d!.locks.tryAcquire('r', { mode: 'read' })).toBeNull();
    await read1.release();
    expect(written).toBe(false);
    await read2.release();
    const writer = await write;
    expect(await d!.locks.tryAcquire('r', { mode: 'read' })).toBeNull();
    await writer.release();
    const late = await d!.locks.tryAcquire('r', { mode: 'read' });
    expect(late).not.toBeNull();
    await late!.release();
    await nothingLeft(root, 'r');
  });

  it('holds a semaphore by at most `permits` clients at once', async () => {
    const { root, all } = await clients(4, 'semaphore');
    const first = await all[0]!.locks.acquire('pool', { permits: 2 });
    const second = await all[1]!.locks.acquire('pool', { permits: 2 });
    expect(await all[2]!.locks.tryAcquire('pool', { permits: 2 })).toBeNull();
    const third = all[3]!.locks.acquire('pool', { permits: 2 });
    await queued(root, 'pool', 3);
    await first.release();
    const granted = await third;
    expect(await all[2]!.locks.tryAcquire('pool', { permits: 2 })).toBeNull();
    await Promise.all([second.release(), granted.release()]);
    await nothingLeft(root, 'pool');
  });

  it('gives fencing tokens that grow with every grant, across clients and modes', async () => {
    const { root, all: [a, b] } = await clients(2, 'fencing');
    const tokens: string[] = [];
    for (const client of [a, b, a, b]) {
      await client!.locks.withLock('r', (lock) => void tokens.push(lock.fencingToken));
    }
    await b!.locks.withLock('r', (lock) => void tokens.push(lock.fencingToken), { mode: 'write' });
    // The simple lock on the same name: its token is its node's czxid, still above the queue's.
    await nothingLeft(root, 'r');
    await a!.locks.withLock('r', (lock) => void tokens.push(lock.fencingToken), { mode: 'simple' });
    expect(tokens).toHaveLength(6);
    for (let i = 1; i < tokens.length; i++) expect(BigInt(tokens[i]!)).toBeGreaterThan(BigInt(tokens[i - 1]!));
    expect([...tokens].sort()).toEqual(tokens);
  });

  it('aborts the holder’s signal with LockLostError when its session expires, and the lock passes on', async () => {
    const { root, all: [a, b] } = await clients(2, 'lost');
    const held: LockHandle = await a!.locks.acquire('r');
    const next = b!.locks.acquire('r');
    await queued(root, 'r', 2);
    const lost = new Promise<unknown>((resolve) => held.signal.addEventListener('abort', () => resolve(held.signal.reason), { once: true }));
    await a!.expire();
    expect(await lost).toBeInstanceOf(LockLostError);
    expect(held.isHeld()).toBe(false);
    const taken = await next;
    expect(BigInt(taken.fencingToken)).toBeGreaterThan(BigInt(held.fencingToken));
    await expect(held.release()).rejects.toBeInstanceOf(LockLostError);
    await taken.release();
    // The expired client works again, in its new session.
    const again = await a!.locks.acquire('r', { waitTimeoutMs: 10_000 });
    await again.release();
    await nothingLeft(root, 'r');
  });

  it("the curator and kazoo layouts at a zkPath: exclusion, FIFO, Curator's downgrade node, kazoo's semaphore pool, a release request", async () => {
    const { root, all: [a, b] } = await clients(2, 'layouts');
    for (const layout of ['curator', 'kazoo'] as const) {
      const zkPath = `${root}-${layout}/svc/lock`;
      const held = await a!.locks.acquire('r', { layout, zkPath, onReleaseRequest: 'notify' });
      expect(await b!.locks.tryAcquire('r', { layout, zkPath })).toBeNull();
      const waiting = b!.locks.acquire('r', { layout, zkPath });
      await eventually(async () => (await backend.children(zkPath)).length === 2, { what: 'the waiter queued' });
      const heard = new Promise((resolve) => held.releaseRequested.addEventListener('abort', resolve, { once: true }));
      expect((await b!.locks.requestRelease({ zkPath, layout })).requested).toHaveLength(1);
      await heard;
      await held.release();
      await (await waiting).release();
      const pool = `${root}-${layout}/pool`;
      const lease = await a!.locks.acquire('p', { layout, zkPath: pool, permits: 1 });
      expect(await b!.locks.tryAcquire('p', { layout, zkPath: pool, permits: 1 })).toBeNull();
      await lease.release();
    }
    await runInNewLockContext(async () => {
      const zkPath = `${root}-curator/doc`;
      const write = await a!.locks.acquire('d', { layout: 'curator', zkPath, mode: 'write' });
      const read = await a!.locks.acquire('d', { layout: 'curator', zkPath, mode: 'read', waitTimeoutMs: 0 });
      expect((await backend.children(zkPath)).some((name) => name.includes('__READ__'))).toBe(true);
      await write.release();
      await read.release();
    });
  });

  it('inspect names the holder and the waiters', async () => {
    const { root, all: [a, b, c] } = await clients(3, 'inspect');
    const held = await a!.locks.acquire('r', { owner: 'job-1' });
    const waiting = b!.locks.acquire('r', { owner: 'job-2' });
    await queued(root, 'r', 2);
    const view = await c!.locks.inspect('r');
    expect(view.recipe).toBe('queue');
    expect(view.holders.map((h) => (h.data as { owner?: string }).owner)).toEqual(['job-1']);
    expect(view.waiters.map((w) => (w.data as { owner?: string }).owner)).toEqual(['job-2']);
    await held.release();
    await (await waiting).release();
    await nothingLeft(root, 'r');
  });
  it('elects one leader in join order, hands over on close and after an expired session, with growing tokens', async () => {
    const { root, all: [a, b] } = await clients(2, 'election');
    const first = a!.locks.elect('relay', { id: 'a' });
    const firstTerm = await first.leadership();
    const second = b!.locks.elect('relay', { id: 'b' });
    await queued(root, 'relay', 2);
    expect([first.isLeader(), second.isLeader()]).toEqual([true, false]);
    expect(await second.participants()).toEqual(['a', 'b']);
    await first.close();
    const secondTerm = await second.leadership();
    expect(firstTerm.signal.aborted).toBe(true);
    expect(BigInt(secondTerm.fencingToken)).toBeGreaterThan(BigInt(firstTerm.fencingToken));
    await b!.expire();
    await eventually(() => secondTerm.signal.aborted, { what: 'the term to end with the session' });
    const thirdTerm = await second.leadership(); // queued again in a new session, alone: leads again
    expect(BigInt(thirdTerm.fencingToken)).toBeGreaterThan(BigInt(secondTerm.fencingToken));
    await second.close();
    await nothingLeft(root, 'relay');
  });
});

/**
 * The lock context policy (`lockContext: 'join' | 'new'`, LockService.runInNewContext) over HTTP on a
 * real ZooKeeper: background work a request starts, and parallel branches of one request, take their
 * own locks (never the request's) when asked to, and join the request's lock by default.
 */
import 'reflect-metadata';
import { Controller, Injectable, type INestApplication, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, InvalidOptionsError, type LockEvent, LockService, ZkLockModule } from '../../lib/index.js';
import { STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

/** What one piece of background work saw of its lock. */
interface Run {
  token: string | undefined;
}

@Injectable()
class Indexer {
  /** The background run a request started last; the test awaits it. */
  lastRun: Promise<Run> = Promise.resolve({ token: undefined });

  constructor(private readonly locks: LockService) {}

  @DistributedLock((id: string) => `orders:${id}`)
  async reindexJoined(id: string): Promise<Run> {
    return { token: this.locks.heldLock(`orders:${id}`)?.fencingToken };
  }

  @DistributedLock((id: string) => `orders:${id}`, { lockContext: 'new' })
  async reindexOwn(id: string): Promise<Run> {
    // Runs in its own context: a call from here joins this method's lock, not the request's.
    const inner = await this.locks.withLock(`orders:${id}`, (lock) => lock.fencingToken);
    const token = this.locks.heldLock(`orders:${id}`)?.fencingToken;
    expect(inner).toBe(token);
    return { token };
  }
}

@Controller('orders')
class OrdersController {
  constructor(
    private readonly locks: LockService,
    private readonly indexer: Indexer,
  ) {}

  private token(id: string): string | undefined {
    return this.locks.heldLock(`orders:${id}`)?.fencingToken;
  }

  /** Fire and forget: the request answers without waiting for the work it started. */
  @Post(':id/background/:how')
  @DistributedLock((id: string) => `orders:${id}`)
  background(@Param('id') id: string, @Param('how') how: string): { token: string | undefined } {
    const resource = `orders:${id}`;
    const work: Record<string, () => Promise<Run>> = {
      'decorated-join': () => this.indexer.reindexJoined(id),
      'decorated-new': () => this.indexer.reindexOwn(id),
      'withlock-join': () => this.locks.withLock(resource, (lock) => ({ token: lock.fencingToken })),
      'withlock-new': () => this.locks.withLock(resource, (lock) => ({ token: lock.fencingToken }), { lockContext: 'new' }),
      'run-in-new-context': () => this.locks.runInNewContext(() => this.locks.withLock(resource, (lock) => ({ token: lock.fencingToken }))),
    };
    this.indexer.lastRun = work[how]!();
    return { token: this.token(id) };
  }

  /** Two branches of one request on one resource, at once. */
  @Post(':id/parallel/:how')
  @DistributedLock((id: string) => `orders:${id}`)
  async parallel(@Param('id') id: string, @Param('how') how: string): Promise<{ tokens: (string | undefined)[] }> {
    const branch = (): Promise<string> => this.locks.withLock(`stock:${id}`, (lock) => lock.fencingToken);
    const tokens = await Promise.all(how === 'new' ? [this.locks.runInNewContext(branch), this.locks.runInNewContext(branch)] : [branch(), branch()]);
    return { tokens };
  }

  /** What a request's context answers, and what a 'new' acquire gets, while the request holds the lock. */
  @Post(':id/try')
  @DistributedLock((id: string) => `orders:${id}`)
  async tryBoth(@Param('id') id: string): Promise<{ joined: boolean; own: boolean; ownVisible: boolean; ownOther: boolean; owner: unknown }> {
    const resource = `orders:${id}`;
    const joined = await this.locks.tryAcquire(resource);
    await joined?.release();
    const own = await this.locks.tryAcquire(resource, { lockContext: 'new' });
    await own?.release();
    // A 'new' lock on another resource is the caller's own: the request's context does not hold it.
    const other = await this.locks.acquire(`${resource}:other`, { lockContext: 'new' });
    const ownVisible = this.locks.heldLock(`${resource}:other`) !== undefined;
    // Its node still names the request that took it.
    const [holder] = (await this.locks.inspect(`${resource}:other`)).holders;
    await other.release();
    const owner = typeof holder?.data === 'object' ? holder.data.owner : undefined;
    return { joined: joined !== null, own: own !== null, ownVisible, ownOther: other.fencingToken.length === 40, owner };
  }
}

describe('the lock context policy, over HTTP on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const rootPath = uniqueRoot('context-policy');
  let app: INestApplication;
  let url: string;
  let locks: LockService;
  let indexer: Indexer;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      // Every wait bounded, so that a regression fails with a LockTimeoutError rather than hanging.
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath, defaultWaitTimeoutMs: 10_000 })],
      controllers: [OrdersController],
      providers: [Indexer],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    locks = app.get(LockService);
    indexer = app.get(Indexer);
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The events of `resource` while `run` runs, in order. */
  async function eventsOf<T>(resource: string, run: () => Promise<T>): Promise<{ result: T; events: LockEvent[] }> {
    const events: LockEvent[] = [];
    const subscription = locks.events$.subscribe((event) => {
      if ('resource' in event && event.resource === resource) events.push(event);
    });
    try {
      return { result: await run(), events };
    } finally {
      subscription.unsubscribe();
    }
  }

  async function background(id: string, how: string): Promise<{ request: string; work: string; events: LockEvent[] }> {
    const { result, events } = await eventsOf(`orders:${id}`, async () => {
      const response = await fetch(`${url}/orders/${id}/background/${how}`, { method: 'POST' });
      expect(response.status).toBe(201);
      const { token } = (await response.json()) as { token: string };
      return { request: token, work: (await indexer.lastRun).token! };
    });
    return { ...result, events };
  }

  /** Each grant in order: `own <token>` for a lock taken from ZooKeeper, `joined <token>` for a reentrant join. */
  const grants = (events: LockEvent[]) => events.flatMap((e) => (e.type === 'acquired' ? [`${e.reentrant ? 'joined' : 'own'} ${e.fencingToken}`] : []));

  for (const how of ['decorated-join', 'withlock-join']) {
    it(`by default, background work a request starts joins the request's lock (${how}: the control)`, async () => {
      const { request, work, events } = await background(`join-${how}`, how);
      expect(request).toMatch(/^\d{40}$/);
      expect(work).toBe(request); // the request's own grant
      // One lock taken from ZooKeeper, shared: the work's acquire was a reentrant join.
      expect(grants(events)).toEqual([`own ${request}`, `joined ${request}`]);
    });
  }

  for (const how of ['decorated-new', 'withlock-new', 'run-in-new-context']) {
    it(`with a new context, background work a request starts takes its own lock, after the request released its one (${how})`, async () => {
      const { request, work, events } = await background(`new-${how}`, how);
      expect(work).toMatch(/^\d{40}$/);
      expect(work).not.toBe(request);
      expect(BigInt(work)).toBeGreaterThan(BigInt(request));
      // Two locks, the request's never joined: the work was granted its own lock after the request's
      // (and the decorated method's own withLock joined the method's lock, in its new context).
      expect(grants(events)).toEqual([`own ${request}`, `own ${work}`, ...(how === 'decorated-new' ? [`joined ${work}`] : [])]);
    });
  }

  it('by default, two Promise.all branches of one request share one lock (the control)', async () => {
    const { result, events } = await eventsOf('stock:p1', async () => {
      const response = await fetch(`${url}/orders/p1/parallel/join`, { method: 'POST' });
      return ((await response.json()) as { tokens: string[] }).tokens;
    });
    expect(result[0]).toMatch(/^\d{40}$/);
    expect(result[1]).toBe(result[0]);
    expect(grants(events)).toEqual([`own ${result[0]}`, `joined ${result[0]}`]);
  });

  it('Promise.all branches each in runInNewContext exclude each other: two grants, one after the other', async () => {
    const { result, events } = await eventsOf('stock:p2', async () => {
      const response = await fetch(`${url}/orders/p2/parallel/new`, { method: 'POST' });
      return ((await response.json()) as { tokens: string[] }).tokens;
    });
    const [first, second] = [...result].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    expect(first).not.toBe(second);
    expect(grants(events)).toEqual([`own ${first}`, `own ${second}`]);
  });

  it("inside a request holding a lock, tryAcquire joins it by default, and with lockContext: 'new' finds it busy; a 'new' lock is not the context's, and its node names the request", async () => {
    const response = await fetch(`${url}/orders/t1/try`, { method: 'POST' });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ joined: true, own: false, ownVisible: false, ownOther: true, owner: 'POST /orders/t1/try (OrdersController.tryBoth)' });
  });

  it('refuses a lock context policy it does not know', async () => {
    await expect(locks.withLock('x', () => 1, { lockContext: 'inherit' as never })).rejects.toThrow(InvalidOptionsError);
    await expect(locks.acquire('x', { lockContext: 'fork' as never })).rejects.toThrow(/"lockContext": must be 'join' or 'new'/);
    await expect(locks.acquireAll(['x'], { lockContext: 'reuse' as never })).rejects.toThrow(InvalidOptionsError);
    expect(() => DistributedLock('x', { lockContext: 'override' as never })).toThrow(/@DistributedLock lockContext/);
  });
});

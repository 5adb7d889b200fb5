import 'reflect-metadata';
import { Readable } from 'node:stream';
import {
  Controller,
  Get,
  Injectable,
  type INestApplication,
  type MessageEvent,
  Module,
  NotFoundException,
  Param,
  Post,
  Sse,
  StreamableFile,
} from '@nestjs/common';
import { Cron, CronExpression, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { interval, map, take } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

@Injectable()
class OrdersService {
  calls = 0;
  @DistributedLock((id: string) => `orders:${id}`)
  async touch(id: string): Promise<string> {
    this.calls += 1;
    return this.inner(id);
  }

  @DistributedLock((id: string) => `orders:${id}`)
  async inner(id: string): Promise<string> {
    return `order ${id}`;
  }

  @DistributedLock('job', { onBusy: 'skip' })
  async nightlyJob(): Promise<string> {
    return 'ran';
  }

  @DistributedLock(() => ['pair:b', 'pair:a'])
  async pairBA(): Promise<string> {
    await sleep(20);
    return 'ba';
  }

  @DistributedLock(() => ['pair:a', 'pair:b'])
  async pairAB(): Promise<string> {
    await sleep(20);
    return 'ab';
  }
}

@Injectable()
class Jobs {
  below = 0;
  above = 0;
  /** The wall-clock second of every run of cronAbove, shared by both applications. */
  static aboveRuns: number[] = [];
  @DistributedLock('cron:below', { onBusy: 'skip' })
  @Cron(CronExpression.EVERY_SECOND)
  async cronBelow(): Promise<void> {
    this.below += 1;
  }

  @Cron(CronExpression.EVERY_SECOND)
  @DistributedLock('cron:above', { onBusy: 'skip' })
  async cronAbove(): Promise<void> {
    this.above += 1;
    Jobs.aboveRuns.push(Math.floor(Date.now() / 1000));
    await sleep(200); // still held when the other instance's run of the same tick asks
  }
}

let gate: Promise<void> = Promise.resolve();

@Controller()
class TestController {
  constructor(
    private readonly orders: OrdersService,
    private readonly locks: LockService,
  ) {}

  @Post('orders/:id')
  @DistributedLock((id: string) => `orders:${id}`)
  async ship(@Param('id') id: string): Promise<{ result: string; token: string | undefined }> {
    const result = await this.orders.touch(id);
    const direct = await this.locks.withLock(`orders:${id}`, () => 'direct');
    return { result: `${result} ${direct}`, token: this.locks.heldLock(`orders:${id}`)?.fencingToken };
  }

  @Get('gated')
  @DistributedLock('gated')
  async gated(): Promise<string> {
    await gate;
    return 'through';
  }

  @Get('busy')
  @DistributedLock('gated', { waitTimeoutMs: 0 })
  busy(): string {
    return 'never while gated is held';
  }

  @Get('missing')
  @DistributedLock('missing')
  missing(): never {
    throw new NotFoundException('no such thing');
  }

  @Sse('events')
  @DistributedLock('events')
  events() {
    return interval(50).pipe(map((n): MessageEvent => ({ data: { n } })));
  }

  @Get('file')
  @DistributedLock('file')
  file(): StreamableFile {
    let sent = 0;
    const stream = new Readable({
      read() {
        sent += 1;
        setTimeout(() => this.push(sent <= 5 ? `chunk ${sent}\n` : null), 40);
      },
    });
    return new StreamableFile(stream);
  }

  @Get('ticks')
  @DistributedLock('ticks')
  ticks() {
    return interval(60).pipe(
      take(5),
      map((n) => n),
    );
  }

  @Get('async-ticks')
  @DistributedLock('async-ticks')
  async asyncTicks() {
    await sleep(1);
    return interval(60).pipe(take(5));
  }
}

@Module({})
class AppModule {}

describe('@DistributedLock over HTTP, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const rootPath = uniqueRoot('http');
  const apps: INestApplication[] = [];
  const urls: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({
        imports: [
          AppModule,
          ScheduleModule.forRoot(),
          ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath }),
        ],
        controllers: [TestController],
        providers: [OrdersService, Jobs],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
      app.enableShutdownHooks();
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      urls.push(await app.getUrl());
    }
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('a handler and the service methods it calls lock the same resource without deadlock (reentrancy)', async () => {
    const response = await fetch(`${urls[0]}/orders/42`, { method: 'POST' });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { result: string; token: string };
    expect(body.result).toBe('order 42 direct');
    expect(body.token).toMatch(/^\d{40}$/);
  });

  it('a second request for a held resource waits, on the same instance and on another one', async () => {
    const observer = await connect();
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const first = fetch(`${urls[0]}/gated`);
    await eventually(async () => (await childrenOf(observer, `${rootPath}/gated`)).length === 1, { what: 'first holds' });
    const sameInstance = fetch(`${urls[0]}/gated`);
    const otherInstance = fetch(`${urls[1]}/gated`);
    // The other instance queues in ZooKeeper. The same instance's second request finds its first one
    // holding, so it starts that instance's cohort queue: it waits there, and the cohort's node queues
    // in ZooKeeper behind the first request's. Three nodes in all, one local waiter.
    await eventually(async () => (await childrenOf(observer, `${rootPath}/gated`)).length === 3, { what: 'both queued' });
    await eventually(async () => (await apps[0]!.get(LockService).inspect('gated')).localWaiters === 1, { what: 'the same instance queued' });
    const busy = await fetch(`${urls[1]}/busy`);
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ statusCode: 409, error: 'Conflict', resource: 'gated' });
    open();
    const responses = await Promise.all([first, sameInstance, otherInstance]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await childrenOf(observer, `${rootPath}/gated`)).toEqual([]);
  });

  it("a handler's own HttpException passes through untouched, and the lock is released", async () => {
    const response = await fetch(`${urls[0]}/missing`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ message: 'no such thing' });
    const observer = await connect();
    expect(await childrenOf(observer, `${rootPath}/missing`)).toEqual([]);
  });

  it('an Observable handler keeps the lock until the Observable completes (also from an async handler)', async () => {
    const observer = await connect();
    for (const resource of ['ticks', 'async-ticks']) {
      const response = fetch(`${urls[0]}/${resource}`);
      await eventually(async () => (await childrenOf(observer, `${rootPath}/${resource}`)).length === 1, { what: 'held' });
      await sleep(150); // the async handler has returned its Observable by now
      const locks = apps[1]!.get(LockService);
      expect(await locks.tryAcquire(resource)).toBeNull();
      const body = await (await response).json();
      expect(body).toBe(4);
      await eventually(async () => (await childrenOf(observer, `${rootPath}/${resource}`)).length === 0, { what: 'released' });
    }
  });

  it('an endless event stream holds its lock until the client goes away', async () => {
    const observer = await connect();
    const client = new AbortController();
    const response = await fetch(`${urls[0]}/events`, { signal: client.signal });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('"n":2')) received += Buffer.from((await reader.read()).value!).toString();
    // Events are flowing, under the lock.
    expect(await childrenOf(observer, `${rootPath}/events`)).toHaveLength(1);
    client.abort();
    await eventually(async () => (await childrenOf(observer, `${rootPath}/events`)).length === 0, {
      what: 'the lock to be released when the client left',
    });
  });

  it('a streamed file holds its lock until the stream ends', async () => {
    const observer = await connect();
    const response = await fetch(`${urls[0]}/file`);
    const reader = response.body!.getReader();
    await reader.read();
    expect(await childrenOf(observer, `${rootPath}/file`)).toHaveLength(1);
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString();
    }
    expect(text).toContain('chunk 5');
    await eventually(async () => (await childrenOf(observer, `${rootPath}/file`)).length === 0, { what: 'released at the end' });
  });

  it('a service method called outside any request takes the lock, and skips when busy with onBusy: skip', async () => {
    const orders = apps[0]!.get(OrdersService);
    expect(await orders.nightlyJob()).toBe('ran');
    const holder = await apps[1]!.get(LockService).acquire('job');
    expect(await orders.nightlyJob()).toBeUndefined();
    await holder.release();
    expect(await orders.nightlyJob()).toBe('ran');
  });

  it('locks several resources in one canonical order: opposite orders do not deadlock', async () => {
    const [a, b] = [apps[0]!.get(OrdersService), apps[1]!.get(OrdersService)];
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a.pairAB() : b.pairBA())));
    expect(results.sort()).toEqual(['ab', 'ab', 'ab', 'ba', 'ba', 'ba']);
  });

  it('keeps @Cron working with @DistributedLock above or below it, one run per tick across instances', async () => {
    const jobs = apps.map((app) => app.get(Jobs));
    await eventually(() => jobs.reduce((n, j) => n + j.below, 0) >= 2 && jobs.reduce((n, j) => n + j.above, 0) >= 2, {
      what: 'both cron jobs to run',
      timeoutMs: 10_000,
    });
    const perSecond = new Map<number, number>();
    for (const second of Jobs.aboveRuns) perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    expect([...perSecond.values()].every((runs) => runs === 1)).toBe(true);
  });

  it('keeps the method name and metadata on the wrapper', () => {
    expect(OrdersService.prototype.touch.name).toBe('touch');
    expect(Reflect.getMetadataKeys(Jobs.prototype.cronBelow)).toEqual(expect.arrayContaining(['SCHEDULE_CRON_OPTIONS']));
    expect(Reflect.getMetadataKeys(Jobs.prototype.cronAbove)).toEqual(expect.arrayContaining(['SCHEDULE_CRON_OPTIONS']));
  });
});

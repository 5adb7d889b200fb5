/**
 * Plain code (an event handler, a queue consumer, a script: no request, so no interceptor) opens its
 * own lock context at its first callback entry: what one call does is reentrant, and two independent
 * calls still exclude each other. Real ZooKeeper.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';

@Injectable()
class Reports {
  constructor(readonly locks: LockService) {}

  @DistributedLock('report')
  async build(): Promise<string | undefined> {
    return this.locks.heldLock('report')?.fencingToken;
  }

  /** A decorated method that calls withLock on its own resource. */
  @DistributedLock('report')
  async buildThenLock(): Promise<string> {
    return this.locks.withLock('report', () => 'inner');
  }
}

@Injectable()
class InvoicesService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock((orderId: string) => `orders:${orderId}`)
  async issue(orderId: string): Promise<string | undefined> {
    return this.locks.heldLock(`orders:${orderId}`)?.fencingToken;
  }
}

/** As in docs/transports.md (Events and queue consumers): an event listener that locks the order, then calls a decorated method on it. */
@Injectable()
class InvoiceListener {
  constructor(
    private readonly locks: LockService,
    private readonly invoices: InvoicesService,
  ) {}

  @OnEvent('order.shipped')
  onShipped(event: { orderId: string }) {
    return this.locks.withLock(`orders:${event.orderId}`, () => this.invoices.issue(event.orderId));
  }
}

describe('plain code outside any request: each callback entry opens a lock context', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const rootPath = uniqueRoot('plain');
  let app: INestApplication;
  let locks: LockService;
  let reports: Reports;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      // Every wait bounded, so that a regression fails with a LockTimeoutError rather than hanging.
      imports: [
        EventEmitterModule.forRoot(),
        ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath, defaultWaitTimeoutMs: 5000 }),
      ],
      providers: [Reports, InvoicesService, InvoiceListener],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    locks = app.get(LockService);
    reports = app.get(Reports);
  });
  afterAll(async () => {
    await app.close();
  });

  it('withLock around a decorated method on the same resource does not wait for itself', async () => {
    const result = await locks.withLock('report', async (outer) => ({ outer: outer.fencingToken, inner: await reports.build() }));
    expect(result.inner).toBe(result.outer);
  });

  it('an @OnEvent listener: withLock around a decorated method on the same order does not wait for itself', async () => {
    const [token] = (await app.get(EventEmitter2).emitAsync('order.shipped', { orderId: '42' })) as (string | undefined)[];
    expect(token).toMatch(/^\d{40}$/);
  });

  it('withLock inside withLock on the same resource does not wait for itself', async () => {
    const result = await locks.withLock('report', (outer) => locks.withLock('report', (inner) => inner.fencingToken === outer.fencingToken));
    expect(result).toBe(true);
  });

  it('a decorated method calling withLock on its resource does not wait for itself', async () => {
    expect(await reports.buildThenLock()).toBe('inner');
  });

  it('a decorated method (an acquireAll helper) inside nested withLock calls joins the outermost lock', async () => {
    const result = await locks.withLock('report', () => locks.withLock('other', () => reports.build()));
    expect(result).toMatch(/^\d{40}$/);
  });

  it('two independent plain-code calls on one resource still exclude each other', async () => {
    const observer = await connect();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let secondRan = false;
    const first = locks.withLock('report', () => gate);
    await eventually(async () => (await childrenOf(observer, `${rootPath}/report`)).length === 1, { what: 'the first call to hold' });
    const second = locks.withLock('report', () => {
      secondRan = true;
    });
    const decorated = reports.build();
    expect(await locks.tryAcquire('report')).toBeNull(); // neither joined the first call's context
    await eventually(async () => (await locks.inspect('report')).localWaiters === 2, { what: 'both calls to queue' });
    expect(secondRan).toBe(false);
    open();
    await Promise.all([first, second, decorated]);
    expect(secondRan).toBe(true);
  });

  it('a handle from acquire() outside any context is not shared: the next acquire waits for it', async () => {
    const held = await locks.acquire('solo');
    expect(await locks.tryAcquire('solo')).toBeNull();
    await held.release();
  });
});

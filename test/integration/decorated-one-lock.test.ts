/**
 * A @DistributedLock method on one resource takes its one lock as `acquire` takes it, with what
 * acquireAll checks first: what a caller sees of it is the same as through acquireAll. The events
 * and the node's owner, the join of an enclosing withLock, a name that cannot be a lock refused
 * before anything is requested, and a timeout that names the method's own waitTimeoutMs. Then
 * acquireAll of one target itself: the owner under `lockContext: 'new'`, a zkPath under rootPath
 * refused before anything is requested, and an abort that leaves nothing queued.
 * Real ZooKeeper.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, InvalidResourceNameError, LockAbortedError, type LockEvent, LockService, LockTimeoutError, ZkLockModule } from '../../lib/index.js';
import type { ZkLockModuleOptions } from '../../lib/service/zk-lock-options.interface.js';
import { childrenOf, eventually, exists, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZkProxy, useZooKeeper } from '../support/zk-fixtures.js';

@Injectable()
class Reports {
  constructor(readonly locks: LockService) {}

  /** Its fencing token and what its node says of its holder. */
  @DistributedLock('report')
  async build(): Promise<{ token: string | undefined; data: unknown }> {
    const { holders } = await this.locks.inspect('report');
    return { token: this.locks.heldLock('report')?.fencingToken, data: holders[0]?.data };
  }

  @DistributedLock((name: string) => name)
  async named(_name: string): Promise<void> {}

  @DistributedLock('report', { waitTimeoutMs: 0 })
  async buildNow(): Promise<void> {}
}

@Injectable()
class Jobs {
  constructor(readonly locks: LockService) {}

  /** Takes 'x' in a new lock context while holding its own lock: what the node of 'x' says of its holder. */
  @DistributedLock('jobs')
  async run(): Promise<unknown> {
    const [x] = await this.locks.acquireAll(['x'], { lockContext: 'new' });
    try {
      return (await this.locks.inspect('x')).holders[0]?.data;
    } finally {
      await x!.release();
    }
  }
}

async function start(options: ZkLockModuleOptions): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ ...STEADY_SESSION, defaultWaitTimeoutMs: 5000, ...options })],
    providers: [Reports, Jobs],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** What matters of each event of `resource` while `run` runs: its type, its grant, its owner. */
async function eventsOf(locks: LockService, resource: string, run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const subscription = locks.events$.subscribe((event: LockEvent) => {
    if (!('resource' in event) || event.resource !== resource) return;
    const grant = 'reentrant' in event ? ` ${event.reentrant ? 'joined' : 'own'} ${event.fencingToken}` : '';
    const tryOnly = event.type === 'requested' ? ` tryOnly=${event.tryOnly}` : '';
    seen.push(`${event.type} ${event.mode}${grant}${tryOnly} owner=${event.owner}`);
  });
  try {
    await run().catch(() => undefined);
    return seen;
  } finally {
    subscription.unsubscribe();
  }
}

describe('@DistributedLock on one resource', () => {
  const zk = useZooKeeper();
  const proxyFor = useZkProxy(zk);
  const connect = useConnections(zk, STEADY_SESSION);
  const rootPath = uniqueRoot('decorated-one');
  let app: INestApplication | undefined;
  let locks: LockService;
  let reports: Reports;
  let jobs: Jobs;
  let other: INestApplication | undefined;

  beforeAll(async () => {
    app = await start({ connectionString: zk.connectString, rootPath });
    locks = app.get(LockService);
    reports = app.get(Reports);
    jobs = app.get(Jobs);
  });
  afterEach(async () => {
    await other?.close();
    other = undefined;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('reports what withLock reports (requested, acquired, released), and its node names the method', async () => {
    let built: Awaited<ReturnType<Reports['build']>> | undefined;
    const events = await eventsOf(locks, 'report', async () => (built = await reports.build()));
    const token = built!.token!;
    expect(events).toEqual([
      'requested exclusive tryOnly=false owner=Reports.build',
      `acquired exclusive own ${token} owner=Reports.build`,
      `released exclusive own ${token} owner=Reports.build`,
    ]);
    expect(built!.data).toMatchObject({ owner: 'Reports.build' });
  });

  it('inside an enclosing withLock on its resource, joins that lock: one node, the outer fencing token', async () => {
    let outer: string | undefined;
    let inner: string | undefined;
    const events = await eventsOf(locks, 'report', () =>
      locks.withLock('report', async (lock) => {
        outer = lock.fencingToken;
        inner = (await reports.build()).token;
      }),
    );
    expect(inner).toBe(outer);
    expect(events).toEqual([
      'requested exclusive tryOnly=false owner=undefined',
      `acquired exclusive own ${outer} owner=undefined`,
      'requested exclusive tryOnly=false owner=undefined',
      `acquired exclusive joined ${outer} owner=undefined`,
      `released exclusive joined ${outer} owner=undefined`,
      `released exclusive own ${outer} owner=undefined`,
    ]);
  });

  it('refuses a name that cannot be a lock before anything is requested: InvalidResourceNameError, no event', async () => {
    let error: unknown;
    const events = await eventsOf(locks, '', () => reports.named('').catch((e: unknown) => (error = e)));
    expect(error).toBeInstanceOf(InvalidResourceNameError);
    expect(events).toEqual([]);
  });

  it('with waitTimeoutMs: 0 and the session away, times out naming 0 ms, not the wait for a session', async () => {
    const proxy = await proxyFor();
    other = await start({ connectionString: proxy.connectString, rootPath, connectTimeoutMs: 300 });
    const away = other.get(LockService);
    await other.get(Reports).buildNow(); // the lock's parent exists: only the session is missing below
    proxy.setRefusing(true);
    try {
      proxy.dropConnections();
      await eventually(() => away.connectionState === 'suspended', { what: 'the session to be away' });
      const error = await other.get(Reports).buildNow().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect(error).toMatchObject({ resource: 'report', waitTimeoutMs: 0 });
    } finally {
      proxy.setRefusing(false);
    }
  });

  it("acquireAll of one target with lockContext: 'new' inside a decorated method: its node names the method", async () => {
    expect(await jobs.run()).toMatchObject({ owner: 'Jobs.run' });
  });

  it('acquireAll of one target refuses a zkPath under rootPath before anything is requested', async () => {
    let error: unknown;
    const events = await eventsOf(locks, 'inside', () =>
      locks.acquireAll([{ resource: 'inside', zkPath: `${rootPath}/inside` }]).catch((e: unknown) => (error = e)),
    );
    expect(error).toBeInstanceOf(InvalidResourceNameError);
    expect((error as Error).message).toMatch(/zkPath is at or under rootPath/);
    expect(events).toEqual([]);
    expect(await exists(await connect(), `${rootPath}/inside`)).toBe(false);
  });

  it('acquireAll of one target aborted while it waits behind a holder: LockAbortedError, nothing left queued', async () => {
    other = await start({ connectionString: zk.connectString, rootPath });
    const waiter = other.get(LockService);
    const observer = await connect();
    const path = `${rootPath}/aborted`;
    const held = await locks.acquire('aborted');
    const holderOnly = await childrenOf(observer, path);
    expect(holderOnly).toHaveLength(1);
    const controller = new AbortController();
    const aborted = waiter.acquireAll(['aborted'], { signal: controller.signal });
    await queueLength(observer, path, 2);
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    expect(await childrenOf(observer, path)).toEqual(holderOnly);
    await held.release();
    const after = await waiter.tryAcquire('aborted');
    expect(after).not.toBeNull();
    await after!.release();
  });
});

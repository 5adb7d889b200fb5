/**
 * A @DistributedLock method on one resource takes its one lock as `acquire` takes it, with what
 * acquireAll checks first: what a caller sees of it is the same as through acquireAll. The events
 * and the node's owner, the join of an enclosing withLock, a name that cannot be a lock refused
 * before anything is requested, and a timeout that names the method's own waitTimeoutMs.
 * Real ZooKeeper.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, InvalidResourceNameError, type LockEvent, LockService, LockTimeoutError, ZkLockModule } from '../../lib/index.js';
import type { ZkLockModuleOptions } from '../../lib/service/zk-lock-options.interface.js';
import { eventually, STEADY_SESSION, uniqueRoot, useZkProxy, useZooKeeper } from '../support/zk-fixtures.js';

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

async function start(options: ZkLockModuleOptions): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ZkLockModule.forRoot({ ...STEADY_SESSION, defaultWaitTimeoutMs: 5000, ...options })],
    providers: [Reports],
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
  const rootPath = uniqueRoot('decorated-one');
  let app: INestApplication;
  let locks: LockService;
  let reports: Reports;
  let other: INestApplication | undefined;

  beforeAll(async () => {
    app = await start({ connectionString: zk.connectString, rootPath });
    locks = app.get(LockService);
    reports = app.get(Reports);
  });
  afterEach(async () => {
    await other?.close();
    other = undefined;
  });
  afterAll(async () => {
    await app.close();
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
    proxy.dropConnections();
    await eventually(() => away.connectionState === 'suspended', { what: 'the session to be away' });
    const error = await other.get(Reports).buildNow().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ resource: 'report', waitTimeoutMs: 0 });
    proxy.setRefusing(false);
  });
});

import 'reflect-metadata';
import { Controller, Get, type INestApplication, Put } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { eventually, STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

/** Handlers wait here until the test opens the gate, so the test sees who is inside at once. */
let openGate: () => void = () => undefined;
let gate = Promise.resolve();
const inside = { readers: 0, writers: 0, mostReaders: 0, overlapWithWriter: 0 };

@Controller('doc')
class DocController {
  constructor(private readonly locks: LockService) {}

  @Get()
  @DistributedLock('doc', { mode: 'read' })
  async read(): Promise<{ token: string }> {
    inside.readers += 1;
    inside.mostReaders = Math.max(inside.mostReaders, inside.readers);
    if (inside.writers > 0) inside.overlapWithWriter += 1;
    await gate;
    inside.readers -= 1;
    return { token: this.locks.heldLock('doc')!.fencingToken };
  }

  @Put()
  @DistributedLock('doc', { mode: 'write' })
  async write(): Promise<string> {
    inside.writers += 1;
    if (inside.readers > 0 || inside.writers > 1) inside.overlapWithWriter += 1;
    await new Promise((r) => setTimeout(r, 5));
    inside.writers -= 1;
    return 'written';
  }

  @Get('pool')
  @DistributedLock('pool', { permits: 2 })
  async pooled(): Promise<string> {
    await gate;
    return 'pooled';
  }

  @Get('pool-now')
  @DistributedLock('pool', { permits: 2, waitTimeoutMs: 0 })
  pooledNow(): string {
    return 'pooled at once';
  }

  @Get('holders')
  holders() {
    return this.locks.inspect('doc');
  }
}

describe('@DistributedLock with read/write modes and permits over HTTP, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const apps: INestApplication[] = [];
  const urls: string[] = [];
  const rootPath = uniqueRoot('rwe2e');

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({
        // Not about sessions ending: a 2 s session was lost on a loaded machine with every read lock it held.
        imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, rootPath, ...STEADY_SESSION })],
        controllers: [DocController],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      urls.push(await app.getUrl());
    }
  });
  afterAll(async () => {
    openGate();
    for (const app of apps) await app.close();
  });

  it('lets GETs read together across instances, makes a PUT wait for them, and shows the holders with their requests', async () => {
    gate = new Promise<void>((r) => (openGate = r));
    const reads = [fetch(`${urls[0]}/doc`), fetch(`${urls[1]}/doc`), fetch(`${urls[0]}/doc`)];
    await eventually(() => inside.readers === 3, { what: 'three readers inside at once' });
    const put = fetch(`${urls[1]}/doc`, { method: 'PUT' });
    const view = await eventually(async () => {
      const body = (await (await fetch(`${urls[0]}/doc/holders`)).json()) as { holders: { data: { owner: string } }[]; waiters: { mode: string; data: { owner: string } }[] };
      return body.waiters.length === 1 ? body : undefined;
    }, { what: 'the PUT to queue' });
    expect(view!.holders.map((h) => h.data.owner)).toEqual(Array(3).fill('GET /doc (DocController.read)'));
    expect(view!.waiters[0]).toMatchObject({ mode: 'write', data: { owner: 'PUT /doc (DocController.write)' } });
    openGate();
    for (const response of await Promise.all(reads)) expect(response.status).toBe(200);
    expect((await put).status).toBe(200);
    expect(inside.mostReaders).toBe(3);
    expect(inside.overlapWithWriter).toBe(0);
  });

  it('lets two requests into a two-permit handler and answers the third with 409', async () => {
    gate = new Promise<void>((r) => (openGate = r));
    const first = fetch(`${urls[0]}/doc/pool`);
    const second = fetch(`${urls[1]}/doc/pool`);
    const locks = apps[0]!.get(LockService);
    await eventually(async () => (await locks.inspect('pool')).holders.length === 2, { what: 'two holders' });
    const third = await fetch(`${urls[1]}/doc/pool-now`);
    expect(third.status).toBe(409);
    expect(await third.json()).toMatchObject({ statusCode: 409, resource: 'pool' });
    openGate();
    expect(await (await first).text()).toBe('pooled');
    expect(await (await second).text()).toBe('pooled');
  });
});

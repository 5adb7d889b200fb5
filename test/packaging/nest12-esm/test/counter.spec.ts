import 'reflect-metadata';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ZkLockModule } from 'nestjs-zk-lock';
import { InMemoryZooKeeper, ZkLockTestingModule, startZkServer, type ZkServer } from 'nestjs-zk-lock/testing';
import { CounterModule } from '../src/counter.module.js';
import { CounterService } from '../src/counter.service.js';

const zookeeper = new InMemoryZooKeeper();

@Module({ imports: [ZkLockTestingModule.forRoot({ zookeeper, isGlobal: true }), CounterModule] })
class InMemoryAppModule {}

async function post(url: string): Promise<{ value: number; fencingToken: string }> {
  const response = await fetch(url, { method: 'POST' });
  assert.equal(response.status, 201, `POST ${url}: ${response.status} ${await response.clone().text()}`);
  return (await response.json()) as { value: number; fencingToken: string };
}

test('concurrent HTTP increments through both locked routes lose no update (in-memory ZooKeeper)', async () => {
  const app = await NestFactory.create(InMemoryAppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  try {
    const base = await app.getUrl();
    const routes = Array.from({ length: 20 }, (_, i) => `${base}/${i % 2 ? 'decorated' : 'with-lock'}`);
    const results = await Promise.all(routes.map(post));
    assert.deepEqual(results.map((r) => r.value).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1));
    assert.equal(new Set(results.map((r) => r.fencingToken)).size, 20, 'every grant has its own fencing token');
  } finally {
    await app.close();
  }
});

let server: ZkServer;
before(async () => {
  server = await startZkServer();
});
after(async () => {
  await server?.stop();
});

test('LockService.withLock serialises concurrent callers on a real ZooKeeper from the testing kit', async () => {
  @Module({ imports: [ZkLockModule.forRoot({ connectionString: server.connectString, isGlobal: true }), CounterModule] })
  class RealAppModule {}
  const app = await NestFactory.createApplicationContext(RealAppModule, { logger: false });
  try {
    const counter = app.get(CounterService);
    const results = await Promise.all(Array.from({ length: 10 }, () => counter.incrementWithLock()));
    assert.deepEqual(results.map((r) => r.value).sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => i + 1));
    const tokens = results.sort((a, b) => a.value - b.value).map((r) => r.fencingToken);
    assert.deepEqual([...tokens].sort(), tokens, 'fencing tokens grow with every grant');
  } finally {
    await app.close();
  }
});

/**
 * `npm run demo`: starts a throw-away ZooKeeper, three instances of the app (each with its own
 * ZooKeeper session), fires concurrent increments at all three, and prints what the lock changes.
 * Stops everything it started.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { startZkServer } from '../test/support/zk-server.js';
import { AppModule } from './app.module.js';
import { COUNTER_STORE, CounterService } from './counter.service.js';
import type { CounterStore } from './counter.store.js';

const INSTANCES = 3;
const REQUESTS_PER_INSTANCE = 100;

async function round(apps: INestApplicationContext[], store: CounterStore, locked: boolean): Promise<number> {
  await store.reset();
  await Promise.all(
    apps.flatMap((app) => {
      const counter = app.get(CounterService);
      return Array.from({ length: REQUESTS_PER_INSTANCE }, () => (locked ? counter.incrementLocked() : counter.incrementUnsafe()));
    }),
  );
  return store.read();
}

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'zk-lock-demo-'));
  console.log('Starting ZooKeeper ...');
  const zk = await startZkServer({ tickMs: 2000 });
  const apps: INestApplicationContext[] = [];
  try {
    for (let i = 0; i < INSTANCES; i++) {
      apps.push(
        await NestFactory.createApplicationContext(
          AppModule.register({ connectionString: zk.connectString, counterFile: join(workDir, 'counter.json') }),
          { logger: ['error', 'warn'] },
        ),
      );
    }
    const store = apps[0]!.get<CounterStore>(COUNTER_STORE);
    const expected = INSTANCES * REQUESTS_PER_INSTANCE;
    console.log(`ZooKeeper at ${zk.connectString}; ${INSTANCES} app instances, ${expected} increments per round.\n`);
    const unsafe = await round(apps, store, false);
    console.log(`without a lock:        counter = ${String(unsafe).padStart(4)} of ${expected}  (${expected - unsafe} lost updates)`);
    const started = performance.now();
    const locked = await round(apps, store, true);
    const ms = performance.now() - started;
    console.log(
      `with withLock():       counter = ${String(locked).padStart(4)} of ${expected}  (${expected - locked} lost updates, ${(expected / (ms / 1000)).toFixed(0)} increments/s)`,
    );
    if (locked !== expected) process.exitCode = 1;
  } finally {
    await Promise.all(apps.map((app) => app.close()));
    await zk.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

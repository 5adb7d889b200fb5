/** The forRootAsync example of docs/guide.md (Configure the module), run as written (imports aside) on a real ZooKeeper. */
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, ZkLockModule } from '../../lib/index.js';
import { useZooKeeper } from '../support/zk-fixtures.js';

/**
 * app.module.ts, as in docs/guide.md. Declared on call: ConfigModule.forRoot() reads .env from the
 * working directory when it is called, which in an application is when the module file loads.
 */
function declareAppModule() {
  @Module({
    imports: [
      ConfigModule.forRoot(),
      ZkLockModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({ connectionString: config.getOrThrow('ZK_CONNECT') }),
      }),
      // or: ZkLockModule.forRoot({ connectionString: '127.0.0.1:2181' })
    ],
  })
  class AppModule {}
  return AppModule;
}

describe("the guide's forRootAsync example", () => {
  const zk = useZooKeeper();
  const saved = { env: process.env.ZK_CONNECT, cwd: process.cwd() };
  let dir: string | undefined;
  afterEach(() => {
    process.chdir(saved.cwd);
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (saved.env === undefined) delete process.env.ZK_CONNECT;
    else process.env.ZK_CONNECT = saved.env;
  });

  it('reads ZK_CONNECT from the .env file through ConfigModule.forRoot() and takes a lock on that server', async () => {
    // Where an application keeps it: in .env, which only ConfigModule.forRoot() loads.
    dir = mkdtempSync(join(tmpdir(), 'readme-config-'));
    writeFileSync(join(dir, '.env'), `ZK_CONNECT=${zk.connectString}\n`);
    delete process.env.ZK_CONNECT;
    process.chdir(dir);
    const app = await NestFactory.createApplicationContext(declareAppModule(), { logger: false, abortOnError: false });
    try {
      const token = await app.get(LockService).withLock('readme:config', (lock) => lock.fencingToken);
      expect(token).toMatch(/^\d{40}$/);
    } finally {
      await app.close();
    }
  });
});

/** The two documented ways to put an application that imports ZkLockModule on the in-memory ZooKeeper. */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService, ZK_LOCK_MODULE_OPTIONS, ZkLockModule } from '../../lib/index.js';
import { InMemoryZooKeeper } from '../../lib/testing/index.js';

@Module({ imports: [ZkLockModule.forRoot({ connectionString: '127.0.0.1:1', connectTimeoutMs: 200 })] })
class AppModule {}

describe('an application module that imports ZkLockModule', () => {
  it('runs on the in-memory ZooKeeper when the test overrides the module options', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const connection = zookeeper.connect();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(ZK_LOCK_MODULE_OPTIONS)
      .useValue({ connection, rootAclCheck: 'off' })
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const held = await app.get(LockService).acquire('r');
    expect(zookeeper.getChildren('/locks/r')).toHaveLength(1);
    zookeeper.expireSession(connection);
    expect(held.isHeld()).toBe(false);
    await app.close();
    connection.close();
  });

  it('runs on the in-memory ZooKeeper given as the connection option', async () => {
    const zookeeper = new InMemoryZooKeeper();
    const connection = zookeeper.connect();
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connection, rootAclCheck: 'off' })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const held = await app.get(LockService).acquire('r');
    zookeeper.expireSession(connection);
    expect(held.isHeld()).toBe(false);
    await app.close();
    connection.close();
  });
});

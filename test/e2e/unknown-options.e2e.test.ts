/**
 * A misspelt option in the object forRootAsync's factory builds from ConfigModule fails the
 * application's start-up with InvalidOptionsError naming it, where it used to be ignored; the same
 * factory with the right name starts and takes a lock on a real ZooKeeper (the control).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, LockService, ZkLockModule, type ZkLockModuleOptions } from '../../lib/index.js';
import { useZooKeeper } from '../support/zk-fixtures.js';

function appModule(connectString: string, timeoutName: string) {
  @Module({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ ZK_CONNECT: connectString, ZK_SESSION_TIMEOUT_MS: 4000 })] }),
      ZkLockModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) =>
          ({ connectionString: config.getOrThrow<string>('ZK_CONNECT'), [timeoutName]: config.get<number>('ZK_SESSION_TIMEOUT_MS') }) as ZkLockModuleOptions,
      }),
    ],
  })
  class AppModule {}
  return AppModule;
}

describe('an unknown option through forRootAsync and ConfigModule', () => {
  const zk = useZooKeeper();

  async function start(timeoutName: string): Promise<unknown> {
    try {
      const app = await NestFactory.createApplicationContext(appModule(zk.connectString, timeoutName), { logger: false, abortOnError: false });
      try {
        return await app.get(LockService).withLock('unknown-options:control', (lock) => lock.fencingToken);
      } finally {
        await app.close();
      }
    } catch (error) {
      return error;
    }
  }

  it('fails start-up naming the misspelt option and the one meant', async () => {
    const error = await start('sessionTimeout');
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error).toMatchObject({ option: 'sessionTimeout' });
    expect((error as Error).message).toMatch(/is not a ZkLockModule option .*the closest option is "sessionTimeoutMs"/);
  });

  it('starts and locks with the right name', async () => {
    expect(await start('sessionTimeoutMs')).toMatch(/^\d{40}$/);
  });
});

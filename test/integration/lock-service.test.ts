import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import {
  InvalidOptionsError,
  InvalidResourceNameError,
  LockLostError,
  LockService,
  LockServiceClosedError,
  ZkConnectionError,
  ZkLockModule,
  type ZkLockModuleOptions,
} from '../../lib/index.js';
import { freePorts } from '../support/zk-server.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';

describe('LockService in a Nest application, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);

  const app = (options: Partial<ZkLockModuleOptions> = {}) => startLockApp(zk, { ...STEADY_SESSION, ...options });

  it('two applications: one holds, the other waits, withLock releases after the callback', async () => {
    const rootPath = uniqueRoot('svc');
    const one = await app({ rootPath });
    const two = await app({ rootPath });
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = one.locks.withLock('orders:1', async (lock) => {
      events.push(`one in ${lock.fencingToken}`);
      await gate;
      events.push('one out');
    });
    const observer = await connect();
    await eventually(async () => (await childrenOf(observer, `${rootPath}/orders:1`)).length === 1, { what: 'one holds' });
    const second = two.locks.withLock('orders:1', (lock) => {
      events.push(`two in ${lock.fencingToken}`);
      return 'result';
    });
    await eventually(async () => (await childrenOf(observer, `${rootPath}/orders:1`)).length === 2, { what: 'two queued' });
    expect(events).toHaveLength(1);
    release();
    await first;
    await expect(second).resolves.toBe('result');
    expect(events[1]).toBe('one out');
    expect(events[2]).toMatch(/^two in \d{40}$/);
    expect(await childrenOf(observer, `${rootPath}/orders:1`)).toEqual([]);
    await one.application.close();
    await two.application.close();
  });

  it('withLock releases when the callback throws, and rethrows its error untouched', async () => {
    const rootPath = uniqueRoot('throws');
    const { application, locks } = await app({ rootPath });
    const boom = new Error('handler failed');
    await expect(locks.withLock('r', () => Promise.reject(boom))).rejects.toBe(boom);
    const again = await locks.tryAcquire('r');
    expect(again).not.toBeNull();
    await again!.release();
    await application.close();
  });

  it('withLock rejects with LockLostError when the lock was lost while the callback ran', async () => {
    const rootPath = uniqueRoot('lostwhile');
    const { application, locks } = await app({ rootPath });
    // Reach the session the service uses, to expire it from outside as a pause would.
    const connection = (locks as unknown as { parts: { connection: { sessionCredentials(): { id: string; password: string } } } }).parts.connection;
    const result = locks.withLock('w', async (lock) => {
      await expireSession(zk.connectString, connection.sessionCredentials());
      if (!lock.signal.aborted) await new Promise((resolve) => lock.signal.addEventListener('abort', resolve));
      return 'done';
    });
    await expect(result).rejects.toBeInstanceOf(LockLostError);
    await application.close();
  });

  it('hostile resource names are refused or stay inside rootPath, one node per name', async () => {
    const rootPath = uniqueRoot('hostile');
    const { application, locks } = await app({ rootPath });
    const observer = await connect();
    const names = ['../../zookeeper', '/', 'a/b/c', '..', '.', 'nul\u0000byte', 'ctl\u0001\u001f', '\u202eevil', '🔒', '%2F'];
    for (const name of names) {
      const lock = await locks.acquire(name);
      const created = await childrenOf(observer, rootPath);
      expect(created).toHaveLength(1);
      expect(created[0]).not.toMatch(/[/\u0000-\u001f]/);
      await lock.release();
      await eventually(async () => (await childrenOf(observer, `${rootPath}/${created[0]}`)).length === 0);
      await eventually(async () => (await childrenOf(observer, rootPath)).length === 0, { what: 'container reaped' });
    }
    await expect(locks.acquire('x'.repeat(10_000))).rejects.toBeInstanceOf(InvalidResourceNameError);
    await expect(locks.acquire('')).rejects.toBeInstanceOf(InvalidResourceNameError);
    expect(await childrenOf(observer, rootPath)).toEqual([]);
    // Nothing escaped: the root's siblings are untouched.
    expect(await childrenOf(observer, '/zookeeper')).not.toContain('..');
    await application.close();
  });

  it('forRootAsync with an injected config provider: the options its factory returns are used (its connect string and rootPath)', async () => {
    @Injectable()
    class Config {
      getOrThrow(key: string): string {
        if (key !== 'ZK_CONNECT') throw new Error(key);
        return zk.connectString;
      }
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}
    const rootPath = uniqueRoot('async');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          useFactory: (config: Config) => ({ connectionString: config.getOrThrow('ZK_CONNECT'), rootPath }),
        }),
      ],
    }).compile();
    const application = await moduleRef.createNestApplication({ logger: false }).init();
    const lock = await application.get(LockService).acquire('a');
    // The lock's node is under the factory's rootPath, on the server the injected provider named.
    expect(await childrenOf(await connect(), `${rootPath}/a`)).toHaveLength(1);
    await lock.release();
    await application.close();
  });

  it('forRootAsync with useClass, and isGlobal, work too', async () => {
    const rootPath = uniqueRoot('useclass');
    @Injectable()
    class LockOptionsFactory {
      create(): ZkLockModuleOptions {
        return { connectionString: zk.connectString, rootPath };
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRootAsync({ useClass: LockOptionsFactory, isGlobal: true })],
    }).compile();
    const application = await moduleRef.createNestApplication({ logger: false }).init();
    const lock = await application.get(LockService).acquire('c');
    const observer = await connect();
    expect(await childrenOf(observer, `${rootPath}/c`)).toHaveLength(1);
    await lock.release();
    await application.close();
  });

  it('start-up fails with a clear error for bad options or an unreachable ZooKeeper', async () => {
    await expect(app({ rootPath: 'relative' })).rejects.toThrow(InvalidOptionsError);
    await expect(app({ connectionString: '' })).rejects.toThrow(/connectionString/);
    await expect(app({ defaultWaitTimeoutMs: -1 })).rejects.toThrow(/defaultWaitTimeoutMs/);
    const [port] = await freePorts(1);
    await expect(app({ connectionString: `127.0.0.1:${port}`, connectTimeoutMs: 300 })).rejects.toThrow(ZkConnectionError);
  });

  it('a connection supplied by the user is used, and never closed by the module', async () => {
    const rootPath = uniqueRoot('supplied');
    const connection = await connect();
    const { application, locks } = await app({ connection, connectionString: undefined, rootPath });
    const lock = await locks.acquire('s');
    expect(await childrenOf(connection, `${rootPath}/s`)).toHaveLength(1);
    await application.close();
    expect(connection.state).toBe('connected');
    expect(lock.isHeld()).toBe(false);
    expect(await childrenOf(connection, `${rootPath}/s`)).toEqual([]);
  });

  it('shutdown tells a holder that is still running: its signal aborts with a LockLostError', async () => {
    const { application, locks } = await app({ rootPath: uniqueRoot('revoke') });
    const lock = await locks.acquire('busy-at-exit');
    await application.close();
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect((lock.signal.reason as Error).message).toMatch(/shutting down/);
    await expect(lock.release()).rejects.toBeInstanceOf(LockLostError);
  });

  it('shutdown releases held locks at once and refuses new ones', async () => {
    const rootPath = uniqueRoot('shutdown');
    const { application, locks } = await app({ rootPath });
    const observer = await connect();
    await locks.acquire('held-at-exit');
    expect(await childrenOf(observer, `${rootPath}/held-at-exit`)).toHaveLength(1);
    await application.close();
    expect(await childrenOf(observer, `${rootPath}/held-at-exit`)).toEqual([]);
    await expect(locks.acquire('late')).rejects.toBeInstanceOf(LockServiceClosedError);
  });
});

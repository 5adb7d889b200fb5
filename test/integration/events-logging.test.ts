import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError, LockService, LockTimeoutError, type ZkLockModuleOptions } from '../../lib/index.js';
import { STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';

const LEVELS = ['log', 'debug', 'verbose', 'warn', 'error'] as const;

describe('lock event logging through Nest\'s Logger', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const services: LockService[] = [];
  let lines: { level: string; message: string }[] = [];

  beforeAll(() => {
    for (const level of LEVELS) {
      vi.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, message: unknown) {
        if ((this as unknown as { context?: string }).context === 'ZkLock') lines.push({ level, message: String(message) });
      });
    }
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });
  beforeEach(() => {
    lines = [];
  });
  afterEach(async () => {
    for (const service of services.splice(0)) await service.onApplicationShutdown();
  });

  async function service(options: Partial<ZkLockModuleOptions> = {}): Promise<LockService> {
    const locks = new LockService({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('log'), rootAclCheck: 'off', ...options });
    services.push(locks);
    await locks.onModuleInit();
    return locks;
  }

  async function someLocking(locks: LockService): Promise<void> {
    const holder = await locks.acquire('r');
    await expect(locks.acquire('r', { waitTimeoutMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await locks.tryAcquire('r')).toBeNull();
    await holder.release();
    await locks.withLock('w', () => undefined, { mode: 'write' });
  }

  it('is quiet by default: no line for acquires, releases and timeouts', async () => {
    await someLocking(await service());
    expect(lines).toEqual([]);
  });

  it('by default a lost session is still one warning, and nothing else is written', async () => {
    const connection = await connect();
    const locks = await service({ connection });
    const held = await locks.acquire('r');
    await expireSession(zk.connectString, connection.sessionCredentials()!);
    await eventually(() => held.signal.aborted, { what: 'the loss' });
    await eventually(() => lines.length > 0, { what: 'the warning' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toMatch(/^ZooKeeper session 0x[0-9a-f]+ was lost/);
  });

  it('logEvents: true writes each event at debug', async () => {
    await someLocking(await service({ logEvents: true }));
    expect(new Set(lines.map((line) => line.level))).toEqual(new Set(['debug']));
    const messages = lines.map((line) => line.message);
    expect(messages).toContainEqual(expect.stringMatching(/^Acquired the exclusive lock on "r" after [\d.]+ ms, fencing token \d+$/));
    expect(messages).toContainEqual(expect.stringMatching(/^Timed out after [\d.]+ ms waiting for the exclusive lock on "r"$/));
    expect(messages).toContain('The exclusive lock on "r" is busy (tryAcquire)');
    expect(messages).toContainEqual(expect.stringMatching(/^Released the write lock on "w" after holding it [\d.]+ ms$/));
  });

  it("logEvents: 'log' writes at log level, and a lost lock is a warning", async () => {
    const connection = await connect();
    const locks = await service({ connection, logEvents: 'log' });
    const held = await locks.acquire('r', { owner: 'nightly report' });
    expect(lines).toContainEqual({ level: 'log', message: 'Waiting for the exclusive lock on "r" for nightly report' });
    await expireSession(zk.connectString, connection.sessionCredentials()!);
    await eventually(() => held.signal.aborted, { what: 'the loss' });
    await eventually(() => lines.filter((line) => line.level === 'warn').length === 2, { what: 'the warnings' });
    const warnings = lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toContainEqual(expect.stringMatching(/^The lock on "r" \(fencing token \d+\) was lost: .* \(held [\d.]+ ms\)$/));
    expect(warnings).toContainEqual(expect.stringMatching(/^ZooKeeper session 0x[0-9a-f]+ was lost/));
    expect(new Set(lines.map((line) => line.level))).toEqual(new Set(['log', 'warn']));
  });

  it('refuses a logEvents value it does not know', () => {
    expect(() => new LockService({ connectionString: zk.connectString, logEvents: 'info' as never })).toThrow(InvalidOptionsError);
  });
});

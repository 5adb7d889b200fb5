/**
 * Which native addon the library runs on, and what this package's own addon (native/) changes:
 * built by the install script, used by default, its sockets kept from child processes; and the
 * fallback to the `zookeeper` package's addon, chosen or forced by a failed build, said once.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { warnOnceIfAddonFellBack } from '../../lib/zookeeper/addon-fallback-warning.js';
import { ADDON_ENV, chooseAddon } from '../../lib/zookeeper/native-client.js';
import type { ZkLockConnection } from '../../lib/zookeeper/zk-lock-connection.js';
import { socketsOf } from '../support/proc-sockets.js';
import { useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const zk = useZooKeeper();
const connect = useConnections(zk);
const fallbackRun = process.env[ADDON_ENV] === 'zookeeper';

describe('the native addon', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'zk-lock-addon-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.skipIf(fallbackRun)('the install script built this package\'s addon, and connections run on it', async () => {
    const connection = await connect();
    expect(connection.addon).toBe('nestjs-zk-lock');
  });

  it.runIf(fallbackRun)(`${ADDON_ENV}=zookeeper runs connections on the zookeeper package's addon`, async () => {
    const connection = await connect();
    expect(connection.addon).toBe('zookeeper');
  });

  // The `zookeeper` package's addon leaves the socket inheritable; a child holding it kept the
  // connection's old registration alive in the parent's epoll set (README, Known limits).
  it.runIf(process.platform === 'linux' && !fallbackRun)('a child process spawned while a session is open does not inherit its socket', async () => {
    const before = socketsOf('self');
    const connection = await connect();
    const zkSockets = [...socketsOf('self')].filter((socket) => !before.has(socket));
    expect(zkSockets.length).toBeGreaterThan(0);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const inherited = [...socketsOf(String(child.pid))].filter((socket) => zkSockets.includes(socket));
      expect(inherited).toEqual([]);
      expect(connection.state).toBe('connected');
    } finally {
      child.kill();
    }
  });

  it('falls back to the zookeeper package\'s addon when this package\'s failed to build, and says why', () => {
    const failedBuild = join(scratch, 'failed');
    const notBuilt = join(scratch, 'not-built');
    mkdirSync(failedBuild);
    mkdirSync(notBuilt);
    writeFileSync(join(failedBuild, 'build-failed.txt'), 'node-gyp exit 1\n');

    const failed = chooseAddon(failedBuild, undefined);
    expect(failed.info.name).toBe('zookeeper');
    expect(failed.info.fallbackReason).toContain('failed to build at install');
    expect(failed.info.fallbackReason).toContain('npm rebuild nestjs-zk-lock');

    const missing = chooseAddon(notBuilt, undefined);
    expect(missing.info).toMatchObject({ name: 'zookeeper' });
    expect(missing.info.fallbackReason).toContain('was not built');

    expect(chooseAddon(notBuilt, 'zookeeper').info).toEqual({ name: 'zookeeper', fallbackReason: `${ADDON_ENV}=zookeeper` });
    expect(() => chooseAddon(notBuilt, 'nestjs-zk-lock')).toThrow(/NESTJS_ZK_LOCK_ADDON=nestjs-zk-lock, but its native addon was not built/);
    expect(() => chooseAddon(notBuilt, 'fast')).toThrow(/NESTJS_ZK_LOCK_ADDON=fast is not a choice/);
  });

  it('warns once per process when it runs on the fallback, and never on the in-memory server', () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message), log() {}, error() {} };
    const memory = { addon: 'in-memory' } as ZkLockConnection;
    const fallback = { addon: 'zookeeper' } as ZkLockConnection;
    warnOnceIfAddonFellBack(memory, logger);
    expect(warnings).toEqual([]);
    warnOnceIfAddonFellBack(fallback, logger);
    warnOnceIfAddonFellBack(fallback, logger);
    expect(warnings).toHaveLength(fallbackRun ? 0 : 1);
    if (!fallbackRun) expect(warnings[0]).toContain(`${ADDON_ENV}=zookeeper chooses that addon and silences this warning`);
  });
});

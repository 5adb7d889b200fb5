/**
 * Which native addon the library runs on: the `zookeeper` package's by default, this package's own
 * (native/) when NESTJS_ZK_LOCK_ADDON=nestjs-zk-lock asks for it, with a clear error when it cannot
 * be used; and what this package's addon changes for child processes. `npm run test:own-addon` runs
 * this file (and others) with the variable set.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADDON_ENV, chooseAddon } from '../../lib/zookeeper/native-client.js';
import { socketsOf } from '../support/proc-sockets.js';
import { useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const zk = useZooKeeper();
const connect = useConnections(zk);
const ownAddon = process.env[ADDON_ENV] === 'nestjs-zk-lock';

describe('the native addon', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'zk-lock-addon-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.skipIf(ownAddon)('connections run on the zookeeper package\'s addon by default', async () => {
    const connection = await connect();
    expect(connection.addon).toBe('zookeeper');
  });

  it.runIf(ownAddon)(`${ADDON_ENV}=nestjs-zk-lock runs connections on this package's addon, which the install script built`, async () => {
    const connection = await connect();
    expect(connection.addon).toBe('nestjs-zk-lock');
  });

  // The `zookeeper` package's addon leaves the socket inheritable; a child holding it kept the
  // connection's old registration alive in the parent's epoll set (README, Known limits).
  it.runIf(process.platform === 'linux' && ownAddon)('a child process spawned while a session is open does not inherit its socket', async () => {
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

  it('asked for this package\'s addon where it failed to build or was not built, says why and how to fix it', () => {
    const failedBuild = join(scratch, 'failed');
    const notBuilt = join(scratch, 'not-built');
    mkdirSync(failedBuild);
    mkdirSync(notBuilt);
    writeFileSync(join(failedBuild, 'build-failed.txt'), 'node-gyp exit 1\n');

    expect(() => chooseAddon(failedBuild, 'nestjs-zk-lock')).toThrow(/NESTJS_ZK_LOCK_ADDON=nestjs-zk-lock, but its native addon failed to build at install .*npm rebuild nestjs-zk-lock/);
    expect(() => chooseAddon(notBuilt, 'nestjs-zk-lock')).toThrow(/NESTJS_ZK_LOCK_ADDON=nestjs-zk-lock, but its native addon was not built/);
    expect(() => chooseAddon(undefined, 'nestjs-zk-lock')).toThrow(/the package root of nestjs-zk-lock could not be found/);
    expect(chooseAddon(failedBuild, undefined).name).toBe('zookeeper');
    expect(chooseAddon(notBuilt, 'zookeeper').name).toBe('zookeeper');
    expect(() => chooseAddon(notBuilt, 'fast')).toThrow(/NESTJS_ZK_LOCK_ADDON=fast is not a choice/);
  });
});

/**
 * The native addon the library runs on: this package's own (native/), always, with a typed error
 * saying what to install and run when it cannot be used (no fallback); and what it does for child
 * processes.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ZkNativeAddonError } from '../../lib/errors.js';
import { loadAddon } from '../../lib/zookeeper/native-client.js';
import { socketsOf } from '../support/proc-sockets.js';
import { useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const zk = useZooKeeper();
const connect = useConnections(zk);

describe('the native addon', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'zk-lock-addon-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("connections run on this package's addon, which the install script built", async () => {
    const connection = await connect();
    expect(connection.addon).toBe('nestjs-zk-lock');
  });

  // A child holding the socket would keep the connection's old registration alive in the parent's
  // epoll set, and the client could never reconnect on that descriptor number.
  it.runIf(process.platform === 'linux')('a child process spawned while a session is open does not inherit its socket', async () => {
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

  it('an addon that failed to build or was not built is refused with a typed error that says what to install and run, with no fallback', () => {
    const failedBuild = join(scratch, 'failed');
    const notBuilt = join(scratch, 'not-built');
    mkdirSync(failedBuild);
    mkdirSync(notBuilt);
    writeFileSync(join(failedBuild, 'build-failed.txt'), 'node-gyp exit 1\n');

    const failed = loadAddon(failedBuild);
    const missing = loadAddon(notBuilt);
    expect(failed).toMatch(/its build at install failed \(the compiler's output is in .*build-failed\.txt\)/);
    expect(missing).toMatch(/it was not built \(no .*zk_native\.node\).*allowScripts/);
    const error = new ZkNativeAddonError(failed as string);
    expect(error.name).toBe('ZkNativeAddonError');
    expect(error.message).toMatch(/cannot talk to ZooKeeper: its native addon cannot be used, because its build at install failed/);
    expect(error.message).toMatch(/build-essential python3.*npm rebuild nestjs-zk-lock/);
  });
});

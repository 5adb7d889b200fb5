/**
 * The native addon the library runs on: this package's own (native/), always, with a typed error
 * saying what to install and run when it cannot be used (no fallback); and what it does for child
 * processes.
 */
import 'reflect-metadata';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ZkNativeAddonError } from '../../lib/errors.js';
import { loadAddon } from '../../lib/zookeeper/native-client.js';
import { BUILT_ADDON, requireBuild } from '../support/native-build.js';
import { socketsOf } from '../support/proc-sockets.js';
import { STEADY_SESSION, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const zk = useZooKeeper();
const connect = useConnections(zk, STEADY_SESSION);

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
    expect(missing).toMatch(/it was not built here \(no .*zk_native\.node\).*allowScripts/);
    // Neither directory has a prebuilt binary either, and each message says so.
    expect(failed).toMatch(/; and there is no prebuilt binary for \S+.* \(this package ships none\)$/);
    expect(missing).toMatch(/; and there is no prebuilt binary for /);
    const error = new ZkNativeAddonError(failed as string);
    expect(error.name).toBe('ZkNativeAddonError');
    expect(error.message).toMatch(/cannot talk to ZooKeeper: its native addon cannot be used, because its build at install failed/);
    expect(error.message).toMatch(/`apt-get install python3 make g\+\+`.*npm rebuild nestjs-zk-lock/);
  });

  // What an install from the tarball has on linux-x64: no native/build, the prebuilt binary only.
  describe.runIf(process.platform === 'linux' && process.arch === 'x64')('the prebuilt binary (native/prebuilds/linux-x64)', () => {
    const repoNative = join(fileURLToPath(new URL('../..', import.meta.url)), 'native');

    /** A package directory holding only what the tarball ships of native/, with the repository's build as its prebuilt binary. */
    function packaged(name: string, edit?: (manifest: Record<string, unknown>) => void): string {
      requireBuild(BUILT_ADDON);
      const pkg = join(scratch, name);
      mkdirSync(join(pkg, 'native'), { recursive: true });
      writeFileSync(join(pkg, 'package.json'), '{"name":"nestjs-zk-lock"}');
      cpSync(join(repoNative, 'prebuilt.cjs'), join(pkg, 'native', 'prebuilt.cjs'));
      const made = spawnSync(process.execPath, [join(repoNative, '..', 'scripts', 'prebuild.cjs'), pkg, '--targets', 'linux-x64'], { encoding: 'utf8' });
      expect(made.status, made.stderr).toBe(0);
      if (edit) {
        const file = join(pkg, 'native', 'prebuilds', 'linux-x64', 'zk_native.json');
        const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        edit(manifest);
        writeFileSync(file, JSON.stringify(manifest));
      }
      return join(pkg, 'native');
    }

    it('with no local build, the library loads the prebuilt binary', () => {
      const addon = loadAddon(packaged('prebuilt-only'));
      expect(typeof addon).toBe('function');
    });

    it('a prebuilt binary for another Node.js ABI is refused with a typed error that names the Node.js it needs', () => {
      const nativeDir = packaged('other-abi', (manifest) => {
        manifest.abi = { kind: 'node', modules: 999, node: '99.0.0' };
      });
      const detail = loadAddon(nativeDir);
      expect(detail).toMatch(/the prebuilt binary .*zk_native\.node cannot be used here: it was built for Node\.js 99 \(NODE_MODULE_VERSION 999\), and this is Node\.js \S+ \(NODE_MODULE_VERSION \d+\): run on Node\.js 99, or build the addon for this Node\.js/);
      expect(new ZkNativeAddonError(detail as string).message).toMatch(/npm rebuild nestjs-zk-lock/);
    });

    it('a Node-API description is checked by Node-API version only (what the port to node-addon-api will ship)', () => {
      const fits = loadAddon(packaged('napi-fits', (manifest) => {
        manifest.abi = { kind: 'napi', napi: 8 };
      }));
      expect(typeof fits).toBe('function');
      const tooNew = loadAddon(packaged('napi-too-new', (manifest) => {
        manifest.abi = { kind: 'napi', napi: 99 };
      }));
      expect(tooNew).toMatch(/it needs Node-API 99, and this Node\.js \S+ has Node-API \d+: use a newer Node\.js/);
    });

    it('a prebuilt binary that needs a newer glibc is refused before it is loaded', () => {
      const detail = loadAddon(packaged('new-glibc', (manifest) => {
        manifest.glibc = '9.99';
      }));
      expect(detail).toMatch(/it needs glibc 9\.99 or newer, and this system has glibc [\d.]+/);
    });
  });
});

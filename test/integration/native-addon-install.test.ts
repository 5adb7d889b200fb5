/**
 * native/install.cjs, the install script, when the build cannot succeed: the install must still
 * succeed (so the package can be imported, and its in-memory testing kit used), say why, and leave
 * the marker the library's ZkNativeAddonError names at the first connect. Runs on a copy of native/ inside the repository (so that the
 * copy finds node_modules), with the C client already built copied along, so only node-gyp runs.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_ADDON, BUILT_C_CLIENT, requireBuild } from '../support/native-build.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const scratch = join(repo, '.zk-test', `native-install-${process.pid}`);

function copyNative(withClient: boolean, name = withClient ? 'with-client' : 'bare'): string {
  const dir = join(scratch, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of ['binding.gyp', 'install.cjs', 'prebuilt.cjs', 'c-client.cjs', 'zookeeper-client-c.tar.gz', 'src', ...(withClient ? ['c-client'] : [])]) {
    cpSync(join(repo, 'native', entry), join(dir, entry), { recursive: true });
  }
  return dir;
}

function install(dir: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(dir, 'install.cjs')], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
}

describe('the install script', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it(
    'a failed build of the addon ends the install successfully, says why and how to retry, and leaves the marker the library names',
    () => {
      requireBuild(BUILT_C_CLIENT);
      const dir = copyNative(true);
      appendFileSync(join(dir, 'src', 'zk_native.cpp'), '\n#error this copy is broken on purpose\n');
      const result = install(dir);
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('building the native addon failed at "node-gyp rebuild"');
      expect(result.stdout).toContain('npm rebuild nestjs-zk-lock');
      expect(result.stdout).toContain('nestjs-zk-lock cannot connect to ZooKeeper (it throws ZkNativeAddonError at the first connect)');
      const marker = readFileSync(join(dir, 'build-failed.txt'), 'utf8');
      expect(marker).toContain('this copy is broken on purpose');
      expect(existsSync(join(dir, 'build', 'Release', 'zk_native.node'))).toBe(false);
    },
  );

  /** A PATH with node and nothing else: no python3, make, cc, gcc, g++ or c++. */
  function pathWithoutCompilers(): string {
    const bin = join(scratch, 'node-only-bin');
    if (!existsSync(bin)) {
      mkdirSync(bin, { recursive: true });
      symlinkSync(process.execPath, join(bin, 'node'));
    }
    return bin;
  }

  it('with no prebuilt binary for this platform and no compiler, it says exactly what to install, builds nothing and still succeeds', () => {
    const dir = copyNative(false, 'no-compiler');
    const result = install(dir, { PATH: pathWithoutCompilers(), PYTHON: '', npm_config_python: '', CC: '', CXX: '' });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/there is no prebuilt binary for \S+ .*\(this package ships none\), and the addon cannot be built from source here: python3, make, a C compiler \(gcc\), a C\+\+ compiler \(g\+\+\) are missing\./);
    expect(result.stdout).toContain('Debian/Ubuntu: `apt-get install python3 make g++`');
    expect(result.stdout).toContain('then run `npm rebuild nestjs-zk-lock`');
    expect(existsSync(join(dir, 'build-failed.txt'))).toBe(false);
    expect(existsSync(join(dir, 'c-client'))).toBe(false);
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')(
    'with a prebuilt binary that loads, it builds nothing, compiler or not, and says so in one line',
    () => {
      requireBuild(BUILT_ADDON);
      const dir = copyNative(false, 'prebuilt');
      const made = spawnSync(process.execPath, [join(repo, 'scripts', 'prebuild.cjs'), join(dir, '..', 'prebuilt-package'), '--targets', 'linux-x64'], { encoding: 'utf8' });
      expect(made.status, made.stderr).toBe(0);
      cpSync(join(dir, '..', 'prebuilt-package', 'native', 'prebuilds'), join(dir, 'prebuilds'), { recursive: true });
      const result = install(dir, { PATH: pathWithoutCompilers() });
      expect(result.status).toBe(0);
      expect(result.stdout.trim()).toMatch(/^nestjs-zk-lock: using the prebuilt native addon \(linux-x64 glibc >= [\d.]+, Node-API \d+\): nothing to build\.$/);
      expect(existsSync(join(dir, 'build'))).toBe(false);
      expect(existsSync(join(dir, 'c-client'))).toBe(false);
    },
  );

  it('the decision: prebuilt when it fits and loads; else build, or say what to install', () => {
    const { decide } = createRequire(import.meta.url)(join(repo, 'native', 'install.cjs')) as {
      decide(input: { prebuilt: { file?: string; manifest?: unknown; problem?: string }; loads?: string; missingTools: string[]; env?: Record<string, string> }): {
        action: string;
        message: string;
      };
    };
    const manifest = { platform: 'linux', arch: 'x64', libc: 'glibc', glibc: '2.28', abi: { kind: 'napi', napi: 8 } };
    const fits = { file: '/p/zk_native.node', manifest };
    expect(decide({ prebuilt: fits, missingTools: ['make'], env: {} })).toEqual({
      action: 'prebuilt',
      message: 'using the prebuilt native addon (linux-x64 glibc >= 2.28, Node-API 8): nothing to build.',
    });
    expect(decide({ prebuilt: fits, loads: 'Error: libfoo.so: cannot open shared object file', missingTools: [], env: {} })).toEqual({
      action: 'build',
      message: 'the prebuilt binary /p/zk_native.node does not load: Error: libfoo.so: cannot open shared object file: building the addon from source.',
    });
    expect(decide({ prebuilt: fits, missingTools: [], env: { NESTJS_ZK_LOCK_BUILD_ADDON: '1' } }).action).toBe('build');
    // 0 means "do not build": a prebuilt binary that fits is still used, and nothing else happens.
    expect(decide({ prebuilt: fits, missingTools: [], env: { NESTJS_ZK_LOCK_BUILD_ADDON: '0' } }).action).toBe('prebuilt');
    expect(decide({ prebuilt: { problem: 'none here' }, missingTools: [], env: { NESTJS_ZK_LOCK_BUILD_ADDON: '0' } })).toEqual({
      action: 'none',
      message: 'NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.',
    });
    const none = decide({ prebuilt: { problem: 'there is no prebuilt binary for linux-arm64 with glibc (this package ships one for linux-x64)' }, missingTools: ['make'], env: {} });
    expect(none.action).toBe('none');
    expect(none.message).toMatch(/^there is no prebuilt binary for linux-arm64 with glibc \(this package ships one for linux-x64\), and the addon cannot be built from source here: make is missing\. Install them \(Debian\/Ubuntu: `apt-get install python3 make g\+\+`/);
  });

  it('NESTJS_ZK_LOCK_BUILD_ADDON=0 skips the build, says so, and leaves no marker', () => {
    const dir = copyNative(false);
    const result = install(dir, { NESTJS_ZK_LOCK_BUILD_ADDON: '0' });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.');
    expect(existsSync(join(dir, 'build-failed.txt'))).toBe(false);
    expect(existsSync(join(dir, 'c-client'))).toBe(false);
  });
});

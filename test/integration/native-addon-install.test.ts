/**
 * native/install.cjs, the install script, when the build cannot succeed: the install must still
 * succeed (so the package can be imported, and its in-memory testing kit used), say why, and leave
 * the marker the library's ZkNativeAddonError names at the first connect. Runs on a copy of native/ inside the repository (so that the
 * copy finds node_modules), with the C client already built copied along, so only node-gyp runs.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const scratch = join(repo, '.zk-test', `native-install-${process.pid}`);

function copyNative(withClient: boolean): string {
  const dir = join(scratch, withClient ? 'with-client' : 'bare');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const entry of ['binding.gyp', 'install.cjs', 'src', ...(withClient ? ['c-client'] : [])]) {
    cpSync(join(repo, 'native', entry), join(dir, entry), { recursive: true });
  }
  return dir;
}

function install(dir: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(dir, 'install.cjs')], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
}

describe('the install script', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.runIf(existsSync(join(repo, 'native', 'c-client', '.libs', 'libzookeeper_st.la')))(
    'a failed build of the addon ends the install successfully, says why and how to retry, and leaves the marker the library names',
    () => {
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

  it('NESTJS_ZK_LOCK_BUILD_ADDON=0 skips the build, says so, and leaves no marker', () => {
    const dir = copyNative(false);
    const result = install(dir, { NESTJS_ZK_LOCK_BUILD_ADDON: '0' });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('NESTJS_ZK_LOCK_BUILD_ADDON=0: the native addon is not built.');
    expect(existsSync(join(dir, 'build-failed.txt'))).toBe(false);
    expect(existsSync(join(dir, 'c-client'))).toBe(false);
  });
});

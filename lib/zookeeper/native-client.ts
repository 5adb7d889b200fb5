import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ZkNativeAddonError } from '../errors.js';
import { resolveHere } from '../shared/package-require.js';
import type { NativeClient, NativeConfig, NativeHandle } from './native-handle.js';

export * from './native-handle.js';

/**
 * The native addon this library drives: the official ZooKeeper C client bound to Node by this
 * package's own binding (native/src/zk_native.cpp): the prebuilt binary shipped for the platform, or
 * one built at install by native/install.cjs from the C client's sources this package ships
 * (native/zookeeper-client-c.tar.gz); its types are in native-handle.ts. Only lib/zookeeper/ (and the testing
 * kit's session tools) load it.
 */

interface NativeModule {
  new (config: NativeConfig): NativeClient;
}

/** The class our addon exports: a native handle that reports events through an `emit` we give it. */
interface AddonHandle extends NativeHandle {
  emit: (event: string, a1?: unknown, a2?: unknown, a3?: unknown) => void;
  close(): void;
}

let loaded: NativeModule | undefined;

/**
 * Loads the addon on first use, so importing the library never fails on a machine without it (the
 * in-memory testing kit needs none); the first connection fails instead, with a
 * ZkNativeAddonError that says how to build it.
 * @throws ZkNativeAddonError when the addon was not built, failed to build, or cannot be loaded.
 */
export function loadNativeModule(): NativeModule {
  if (loaded) return loaded;
  const root = packageRoot(resolveHere().file);
  const addon = root === undefined ? 'the package root of nestjs-zk-lock (its package.json) could not be found from ' + resolveHere().file : loadAddon(join(root, 'native'));
  if (typeof addon === 'string') throw new ZkNativeAddonError(addon);
  loaded = addon;
  return loaded;
}

/**
 * The directory of this package's package.json, found by walking up from this file: from dist/ when
 * installed, lib/ under Vitest, build/lib/ in this repository's ES module builds. A package.json
 * without this package's name (dist/package.json, which only marks the build CommonJS) is passed by.
 */
function packageRoot(file: string): string | undefined {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'nestjs-zk-lock') return dir;
  }
  return undefined;
}

/** What native/prebuilt.cjs (shared with the install script) exports, as far as the library uses it. */
interface PrebuiltHelper {
  findPrebuilt(nativeDir: string): { file?: string; problem?: string };
}

/**
 * native/prebuilt.cjs: the one definition of which prebuilt binary fits this platform and Node.js
 * ABI. From `nativeDir` when it has one (the installed package), else from this package's native/.
 */
function prebuiltHelper(nativeDir: string): PrebuiltHelper | undefined {
  const root = packageRoot(resolveHere().file);
  for (const dir of [nativeDir, ...(root === undefined ? [] : [join(root, 'native')])]) {
    const file = join(dir, 'prebuilt.cjs');
    if (existsSync(file)) return resolveHere().require(file) as PrebuiltHelper;
  }
  return undefined;
}

/** The addon's class, or why the file does not load (its dlopen or registration error). */
function requireAddon(file: string): { Handle: new () => AddonHandle } | { problem: string } {
  try {
    return { Handle: (resolveHere().require(file) as { ZooKeeper: new () => AddonHandle }).ZooKeeper };
  } catch (error) {
    return { problem: (error as Error).message.split('\n')[0] };
  }
}

/**
 * The addon in `nativeDir` (this package's native/) wrapped as a NativeClient, or why it cannot be
 * used. A local build (native/build/Release, made by the install script or `npm rebuild`) comes
 * first; else the prebuilt binary for this platform (native/prebuilds/, when it fits this Node.js).
 * Exported for tests.
 */
export function loadAddon(nativeDir: string): NativeModule | string {
  const failed = join(nativeDir, 'build-failed.txt');
  const file = join(nativeDir, 'build', 'Release', 'zk_native.node');
  let Handle: (new () => AddonHandle) | undefined;
  let local: string;
  if (existsSync(file)) {
    const built = requireAddon(file);
    if ('Handle' in built) Handle = built.Handle;
    local = `the local build ${file} could not be loaded (${'problem' in built ? built.problem : ''}); it may have been built for another Node.js version or platform`;
  } else if (existsSync(failed)) {
    local = `its build at install failed (the compiler's output is in ${failed})`;
  } else {
    local = `it was not built here (no ${file})`;
  }
  if (Handle) return addonClient(Handle);
  const prebuilt = prebuiltHelper(nativeDir)?.findPrebuilt(nativeDir) ?? { problem: 'this copy of the package has no native/prebuilt.cjs' };
  if (prebuilt.problem === undefined && prebuilt.file !== undefined) {
    const shipped = requireAddon(prebuilt.file);
    if ('Handle' in shipped) return addonClient(shipped.Handle);
    return `the prebuilt binary ${prebuilt.file} could not be loaded (${shipped.problem}); and ${local}`;
  }
  if (prebuilt.file !== undefined) return `${prebuilt.problem}; and ${local}`;
  // No prebuilt binary for this platform: the install script was the only way to get the addon.
  const why = existsSync(file) || existsSync(failed)
    ? ''
    : ': the install script did not run (npm skips it with --ignore-scripts, or when "allowScripts" denies it: allow it with "allowScripts": { "nestjs-zk-lock": true }), or was skipped with NESTJS_ZK_LOCK_BUILD_ADDON=0, or found no compiler (it printed what to install) or no C client to build with (Windows is not supported)';
  return `${local}${why}; and ${prebuilt.problem ?? 'no prebuilt binary was found'}`;
}

/** The addon's class wrapped as a NativeClient. */
function addonClient(Native: new () => AddonHandle): NativeModule {
  return class AddonClient extends EventEmitter implements NativeClient {
    readonly native: AddonHandle;
    constructor() {
      super();
      this.native = new Native();
      // 'connect' and 'close' name the client; node events name the handle (see NativeClient).
      this.native.emit = (event, a1, a2, a3) => this.emit(event, event === 'connect' || event === 'close' ? this : a1, a2, a3);
    }
    close(): void {
      this.native.close();
    }
  };
}

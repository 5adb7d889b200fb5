import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The native addon this library drives (the official ZooKeeper C client bound to Node), typed
 * narrowly: the `zookeeper` package's, or, opted in, this package's own (native/src/zk_native.cpp,
 * built at install), which is derived from it and keeps its interface. Only
 * lib/zookeeper/ (and the testing kit's session tools) load it.
 *
 * Operations go to `native` directly: the package's JavaScript wrappers format a debug string with
 * util.inspect on every call, even with logging off, which costs more than the request itself.
 */

/** ZooKeeper's Stat, as the binding converts it (zxids as numbers: exact below 2^53). */
export interface ZkStat {
  czxid: number;
  mzxid: number;
  pzxid: number;
  version: number;
  cversion: number;
  numChildren: number;
  dataLength: number;
  /** Session id (hex) of an ephemeral node's owner; '0' for other nodes. */
  ephemeralOwner: string;
  /** When the node was created (server clock). */
  ctime?: Date;
}

type Done = (rc: number, message: string) => void;
/** An ACL entry as the binding returns it. */
export interface NativeAcl {
  perms: number;
  scheme: string;
  auth: string;
}
/** Watch callback: type (1 created, 2 deleted, 3 changed, 4 child, -1 session), state, path. */
export type NativeWatcher = (type: number, state: number, path: string) => void;

export interface NativeHandle {
  a_create(path: string, data: Buffer | string, flags: number, cb: (rc: number, msg: string, path: string) => void): number;
  a_get_children2(
    path: string,
    watch: boolean,
    cb: (rc: number, msg: string, children: string[], stat: ZkStat) => void,
  ): number;
  aw_get(path: string, watcher: NativeWatcher, cb: (rc: number, msg: string, stat: ZkStat, data: Buffer) => void): number;
  a_get(path: string, watch: boolean, cb: (rc: number, msg: string, stat: ZkStat, data: Buffer | null) => void): number;
  a_exists(path: string, watch: boolean, cb: (rc: number, msg: string, stat: ZkStat) => void): number;
  a_set(path: string, data: Buffer, version: number, cb: (rc: number, msg: string, stat: ZkStat) => void): number;
  a_delete_(path: string, version: number, cb: Done): number;
  add_auth(scheme: string, auth: string, cb: Done): number;
  a_get_acl(path: string, cb: (rc: number, msg: string, acl: NativeAcl[] | null, stat: ZkStat | null) => void): number;
  /** The binding reads `perm` (not `perms`) from each entry. */
  a_set_acl(path: string, version: number, acl: { scheme: string; auth: string; perm: number }[], cb: Done): number;
  /** Starts the C client. Returns an Error (it does not throw) when the connect string is unusable. */
  init(config: NativeConfig): unknown;
  readonly client_id: string;
  readonly client_password: string;
  /** Negotiated session timeout in ms, -1 when closed. */
  readonly timeout: number;
  /** The C client's state (zoo_state): 3 connected, 1 connecting, 999 not connected, ... */
  readonly state: number;
}

/**
 * The package's wrapper object: an EventEmitter for 'connect', 'connecting' and 'close', and for the
 * default watcher's node events ('changed', 'deleted', ...), emitted as (event, native handle, path).
 * Watches set with `a_get(path, true)` report there and leave nothing behind in the binding; a watch
 * function given to `aw_get` is never freed.
 */
export interface NativeClient extends EventEmitter {
  native: NativeHandle;
  close(): void;
}

export interface NativeConfig {
  connect: string;
  timeout: number;
  debug_level: number;
  host_order_deterministic: boolean;
  /** After this many consecutive empty polls the binding closes the handle as expired (default 10). */
  response_counter_limit?: number;
  client_id?: string;
  client_password?: string;
}

interface NativeModule {
  new (config: NativeConfig): NativeClient;
}

/** The addon that talks to ZooKeeper: the `zookeeper` package's (the default), or this package's own (opt-in). */
export type NativeAddonName = 'nestjs-zk-lock' | 'zookeeper';

/** The class our addon exports: a native handle that reports events through an `emit` we give it. */
interface OwnAddonHandle extends NativeHandle {
  emit: (event: string, a1?: unknown, a2?: unknown, a3?: unknown) => void;
  close(): void;
}

/**
 * A `require` resolving from this file, in either module system. The published build is CommonJS,
 * where `__filename` is this file (Vitest provides it too). This repository also compiles lib/ to ES
 * modules (sample app, benchmarks, fault suite), which have no `__filename`; `import.meta` would be a
 * syntax error in the CommonJS build, so there the file is read from V8's call site instead.
 */
let here: { file: string; require: NodeJS.Require } | undefined;
/** Computed on first use, so importing the library never fails (see loadNativeModule). */
function resolveHere(): { file: string; require: NodeJS.Require } {
  if (here) return here;
  const file = typeof __filename === 'string' ? __filename : fileOfThisModule();
  here = { file, require: createRequire(file) };
  return here;
}

function fileOfThisModule(): string {
  const original = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_error, callSites) => callSites;
    const file = (new Error().stack as unknown as NodeJS.CallSite[] | undefined)?.[0]?.getFileName();
    if (file?.startsWith('file:')) return fileURLToPath(file);
    if (!file) {
      throw new Error(
        'nestjs-zk-lock cannot tell which file lib/zookeeper/native-client was loaded from, so it cannot find the ' +
          'ZooKeeper addon. Load the published CommonJS build (it has __filename), or report this with the name of your bundler or loader.',
      );
    }
    return file;
  } finally {
    Error.prepareStackTrace = original;
  }
}

let loaded: LoadedAddon | undefined;

/** An addon's module and its name. */
interface LoadedAddon {
  module: NativeModule;
  name: NativeAddonName;
}

/** The environment variable that picks the addon: `nestjs-zk-lock` opts in to this package's own. */
export const ADDON_ENV = 'NESTJS_ZK_LOCK_ADDON';

/**
 * Loads the addon on first use, so importing the library never fails on a machine without it.
 * The `zookeeper` package's by default; this package's own (native/, built by its install script:
 * see native/src/zk_native.cpp for how it differs) with NESTJS_ZK_LOCK_ADDON=nestjs-zk-lock. It is
 * opt-in until a fault soak on it is understood (README, "The native addon").
 */
export function loadNativeModule(): NativeModule {
  loaded ??= loadAddon();
  return loaded.module;
}

/** Which addon is in use (loading it if need be). */
export function nativeAddonName(): NativeAddonName {
  loaded ??= loadAddon();
  return loaded.name;
}

function loadAddon(): LoadedAddon {
  const root = packageRoot(resolveHere().file);
  return chooseAddon(root === undefined ? undefined : join(root, 'native'), process.env[ADDON_ENV]);
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

/**
 * The addon to use, given this package's native/ directory and the NESTJS_ZK_LOCK_ADDON setting.
 * Exported for tests.
 */
export function chooseAddon(nativeDir: string | undefined, wanted: string | undefined): LoadedAddon {
  if (wanted !== undefined && wanted !== '' && wanted !== 'zookeeper' && wanted !== 'nestjs-zk-lock') {
    throw new Error(`${ADDON_ENV}=${wanted} is not a choice: use 'zookeeper' (the default) or 'nestjs-zk-lock'`);
  }
  if (wanted !== 'nestjs-zk-lock') return { module: resolveHere().require('zookeeper') as NativeModule, name: 'zookeeper' };
  const own = nativeDir === undefined ? 'the package root of nestjs-zk-lock could not be found' : loadOwnAddon(nativeDir);
  if (typeof own === 'string') throw new Error(`${ADDON_ENV}=nestjs-zk-lock, but ${own}`);
  return { module: own, name: 'nestjs-zk-lock' };
}

/** Our addon wrapped as a NativeClient, or why it cannot be used. */
function loadOwnAddon(nativeDir: string): NativeModule | string {
  const failed = join(nativeDir, 'build-failed.txt');
  if (existsSync(failed)) return `its native addon failed to build at install (${failed}); \`npm rebuild nestjs-zk-lock\` tries again`;
  const file = join(nativeDir, 'build', 'Release', 'zk_native.node');
  if (!existsSync(file)) return `its native addon was not built (no ${file}): the install script did not run, or found no C client to build against`;
  let Handle: new () => OwnAddonHandle;
  try {
    Handle = (resolveHere().require(file) as { ZooKeeper: new () => OwnAddonHandle }).ZooKeeper;
  } catch (error) {
    return `its native addon ${file} could not be loaded: ${(error as Error).message}`;
  }
  return class OwnAddonClient extends EventEmitter implements NativeClient {
    readonly native: OwnAddonHandle;
    constructor() {
      super();
      this.native = new Handle();
      // 'connect' and 'close' name the client; node events name the handle, as with the other addon.
      this.native.emit = (event, a1, a2, a3) => this.emit(event, event === 'connect' || event === 'close' ? this : a1, a2, a3);
    }
    close(): void {
      this.native.close();
    }
  };
}

export const CREATE_FLAGS = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
} as const;

export const WATCH_EVENT = { SESSION: -1 } as const;
/** The C client's log levels (zoo_set_debug_level); 0 turns its logging off. */
export const CLIENT_LOG_LEVELS = { off: 0, error: 1, warn: 2, info: 3, debug: 4 } as const;
export type ClientLogLevel = keyof typeof CLIENT_LOG_LEVELS;

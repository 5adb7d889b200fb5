import { createRequire } from 'node:module';
import type { EventEmitter } from 'node:events';

/**
 * The slice of the `zookeeper` package (the official C client as a Node addon) this library uses,
 * typed narrowly. Only lib/zookeeper/ imports it.
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
  constants: Record<string, number>;
}

const require = createRequire(import.meta.url);
let loaded: NativeModule | undefined;

/** Loads the addon on first use, so importing the library never fails on a machine without it. */
export function loadNativeModule(): NativeModule {
  loaded ??= require('zookeeper') as NativeModule;
  return loaded;
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

import type { EventEmitter } from 'node:events';

/**
 * What the native addon (native/src/zk_native.cpp) offers, typed narrowly: its handle, its events,
 * its configuration and the C client's constants. native-client.ts loads it.
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
  /** When the node's data was last written, or its creation (server clock: the leader's, one clock for the ensemble). */
  mtime?: Date;
}

type Done = (rc: number, message: string) => void;
/** An ACL entry as the binding returns it. */
export interface NativeAcl {
  perms: number;
  scheme: string;
  auth: string;
}
/** One operation of a_multi: `type` is the C client's op code (MULTI_OPS); `version` -1 matches any. */
export interface NativeMultiOp {
  type: number;
  path: string;
  data?: Buffer | string;
  version?: number;
  /** A create's mode (CREATE_FLAGS). */
  flags?: number;
  /** A create's ACL, as a_create_acl takes it; the open ACL when absent. */
  acl?: { scheme: string; auth: string; perm: number }[];
}

/** The C client's op codes for a_multi (zookeeper.h ZOO_*_OP). */
export const MULTI_OPS = { create: 1, delete: 2, setData: 5, check: 13 } as const;

/** Watch callback: type (1 created, 2 deleted, 3 changed, 4 child, -1 session), state, path. */
export type NativeWatcher = (type: number, state: number, path: string) => void;

export interface NativeHandle {
  a_create(path: string, data: Buffer | string, flags: number, cb: (rc: number, msg: string, path: string) => void): number;
  /** a_create with the node's ACL in the create request (entries as a_set_acl takes them; not empty). */
  a_create_acl(
    path: string,
    data: Buffer | string,
    flags: number,
    acl: { scheme: string; auth: string; perm: number }[],
    cb: (rc: number, msg: string, path: string) => void,
  ): number;
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
  /**
   * One transaction (zoo_amulti): every operation applies, in order, or none does. `rc` is the first
   * failed operation's code (0 when all applied); each result has its operation's code.
   */
  a_multi(ops: NativeMultiOp[], cb: (rc: number, msg: string, results: { rc: number; path?: string }[]) => void): number;
  /**
   * Removes this session's data watches on `path` on the server (zoo_aremove_all_watches). Returns
   * or answers ZNOWATCHER (-121) when none is set.
   */
  a_remove_data_watches(path: string, cb: Done): number;
  /**
   * Session contact from the C client's own pings (sent every third of the session timeout while
   * idle): how long ago, in ms at this call (fractional, rounded up to the microsecond), the most
   * recent ping the server answered on the current connection was sent, measured on CLOCK_MONOTONIC,
   * the clock of performance.now(); -1 when no ping was answered since the client (re)connected.
   * When several pings were outstanding, the send time of the oldest stands for the one answered, so
   * this is never shorter than the answered ping's true age. Use {@link pingAnsweredAt}.
   */
  ping_answered_age(): number;
  /**
   * Reads `/zookeeper/config` (zoo_awgetconfig) and leaves a watch on it that calls `watcher` once
   * when it changes (and with every session event before that).
   */
  aw_getconfig(watcher: NativeWatcher, cb: (rc: number, msg: string, stat: ZkStat, data: Buffer | null) => void): number;
  /**
   * Gives the C client a new server list, `host:port,...` without a chroot (zoo_set_servers). It
   * keeps its connection when its server is in the list, unless it moves to spread the load; else it
   * closes its socket at once, silently, as a failed send does (see SOCKET_DROPPED_STATE).
   */
  set_servers(hosts: string): number;
  /**
   * TLS: the host names addresses were looked up from, which the servers there must hold in their
   * certificates (as `tls_names` at init); a name given again for an address replaces the one before.
   */
  tls_names(names: readonly { address: string; port: number; name: string }[]): void;
  /** Starts the C client. Returns an Error (it does not throw) when the connect string is unusable. */
  init(config: NativeConfig): unknown;
  readonly client_id: string;
  readonly client_password: string;
  /** Negotiated session timeout in ms, -1 when closed. */
  readonly timeout: number;
  /** The server of the current connection, `host:port` (IPv6 in brackets); null while not connected. */
  readonly current_server: string | null;
  /** The C client's state (zoo_state): 3 connected, 1 connecting, 999 not connected, ... */
  readonly state: number;
}

/**
 * The send time, on performance.now()'s clock, of the most recent ping the server answered on the
 * handle's current connection, or undefined when none was since it (re)connected. A safe lower
 * bound: never later than that ping's true send time (performance.now() is read before the age, and
 * the age is never short; see ping_answered_age).
 */
export function pingAnsweredAt(handle: Pick<NativeHandle, 'ping_answered_age'>): number | undefined {
  const now = performance.now();
  const age = handle.ping_answered_age();
  return age < 0 ? undefined : now - age;
}

/**
 * The addon's handle as an EventEmitter for 'connect', 'connecting' and 'close', and for the default
 * watcher's node events ('changed', 'deleted', ...), emitted as (event, native handle, path).
 * Watches set with `a_get(path, true)` report there and leave nothing behind in the binding; a watch
 * function given to an `aw_*` method is kept until its watch fires, is removed, or the handle closes.
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
  /** TLS: "ca,cert,key,passphrase" (PEM paths, the last three optional) for zookeeper_init_ssl. */
  cert?: string;
  /**
   * TLS: the host name each address of `connect` was looked up from, which the server there must
   * hold in its certificate; an address not listed must be named by its IP (see native/c-client.cjs, patchHostCheck).
   */
  tls_names?: { address: string; port: number; name: string }[];
  /** TLS: true to accept a certificate for any name (tls.verifyHostname: false). */
  tls_any_name?: boolean;
  /** SASL: { mechanism, user, service, password?, keytab?, host? | host_map? } (see zk-sasl.options.ts nativeSasl). */
  sasl?: Record<string, string>;
}

/**
 * The C client's state after it closed its socket inside a request whose send failed (the server had
 * reset the connection): it does so without an event, and only the request's caller can see it.
 */
export const SOCKET_DROPPED_STATE = 999;

export const CREATE_FLAGS = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
} as const;

export const WATCH_EVENT = { SESSION: -1 } as const;
/** How much the ZooKeeper C client logs (to stderr): the `clientLogLevel` option. */
export type ClientLogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';
/** The C client's log levels (zoo_set_debug_level); 0 turns its logging off. */
export const CLIENT_LOG_LEVELS: Readonly<Record<ClientLogLevel, number>> = { off: 0, error: 1, warn: 2, info: 3, debug: 4 };

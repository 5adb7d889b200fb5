import type { ZkSessionApi } from './zk-session-api.js';

/**
 * Connection states, named as Curator names them:
 * - `connected`: a new session is established (the first one, or a fresh one after `lost`);
 * - `suspended`: the connection dropped; the session may still be alive on the server;
 * - `reconnected`: the same session is back; everything it held is still held;
 * - `lost`: the session expired, or stayed disconnected for the whole session timeout; its
 *   ephemeral nodes (and so its locks) are gone or about to be; a new session is being opened;
 * - `closed`: `close()` was called.
 */
export type ConnectionState = 'connected' | 'suspended' | 'reconnected' | 'lost' | 'closed';
export type ConnectionStateListener = (state: ConnectionState, sessionId: string) => void;

/**
 * What LockService needs of a connection: ZkConnection, or the in-memory one of
 * `nestjs-zk-lock/testing`. The `connection` option of ZkLockModule takes either.
 */
export interface ZkConnectionLike {
  /** How long `connect()` waits for the first session, in ms; also bounds tryAcquire's wait for a connected session. */
  readonly connectTimeoutMs: number;
  /** Where it connects, as given (`host:port,...[/chroot]`), without credentials. */
  readonly connectionString: string;
  /** The session timeout the server granted, in ms; undefined before the first session. */
  readonly negotiatedSessionTimeoutMs: number | undefined;
  /**
   * What talks to the server: `nestjs-zk-lock` (this package's native addon, the only one a real
   * connection uses) or `in-memory` (the testing kit's server).
   */
  readonly addon: 'nestjs-zk-lock' | 'in-memory';
  /** Whether the connection to the servers uses TLS (the `tls` option); false in memory. */
  readonly tls: boolean;
  /** The digest credential `user:password` added to every session, if any. */
  readonly digest: string | undefined;
  /**
   * The SASL mechanism every session authenticates with, and the names the servers may give that
   * identity in `sasl` ACLs; undefined without SASL (and in memory).
   */
  readonly sasl?: { readonly mechanism: string; readonly names: readonly string[] } | undefined;
  /** The state of the current session, or `closed`. */
  readonly state: ConnectionState | 'connecting';
  /** The current session's id (hex), or undefined before the first connect. */
  readonly sessionId: string | undefined;
  /** The member the session is connected to now (`address:port`); undefined while disconnected, and in memory. */
  readonly currentServer?: string | undefined;
  /** The member list in use (`host:port`, see ZkConnection.ensemble); absent in memory. */
  readonly ensemble?: { readonly members: readonly string[]; readonly configVersion: string | undefined };
  /** Opens the first session; resolves once connected. */
  connect(): Promise<void>;
  /** Ends the session (its ephemeral nodes go at once) and stops reconnecting. */
  close(): void;
  /** Listens to state changes; returns the function that stops listening. */
  onStateChange(listener: ConnectionStateListener): () => void;
  /**
   * The current session while it is live, without a call (see SessionSource.live): kept out of the
   * published types. @internal
   */
  readonly live: ZkSessionApi | undefined;
  /**
   * The current live session, waiting for one while a new one is being opened: the recipes' way to
   * ZooKeeper, kept out of the published types. @internal
   */
  session(signal?: AbortSignal): Promise<ZkSessionApi>;
}

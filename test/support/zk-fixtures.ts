/**
 * Per-file test fixtures: a real ZooKeeper (its own, or the one ZK_CONNECT names), connections that
 * are closed after each test, and read-only views of the server's state.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.options.js';
import { ZkNoNodeError } from '../../lib/zookeeper/zk-errors.js';
import { eventually } from './zk-admin.js';
import { startZkServer, type ZkServer } from './zk-server.js';
import { startZkProxy, type ZkProxy } from './zk-proxy.js';

export { eventually, expireSession, fourLetterTo, watchesByPath } from './zk-admin.js';
export { countingSessions } from './counting-sessions.js';

export interface ZooKeeperFixture {
  /** Connect string of the server under test. */
  readonly connectString: string;
  /** The server process, when this file started its own (undefined under ZK_CONNECT). */
  readonly server: ZkServer | undefined;
}

/**
 * A ZooKeeper for this test file: the one in ZK_CONNECT, or a standalone server started for the file
 * (always its own when `own` is set, for tests that stop or restart it; `config`: lines added to
 * that server's zoo.cfg).
 */
export function useZooKeeper(options: { own?: boolean; config?: string[]; containerCheckIntervalMs?: number } = {}): ZooKeeperFixture {
  const fixture: { connectString: string; server: ZkServer | undefined } = { connectString: '', server: undefined };
  beforeAll(async () => {
    const external = process.env.ZK_CONNECT;
    if (external && !options.own && !options.config && options.containerCheckIntervalMs === undefined) {
      fixture.connectString = external;
      return;
    }
    fixture.server = await startZkServer({
      ...(options.config ? { extraConfig: options.config } : {}),
      ...(options.containerCheckIntervalMs !== undefined ? { containerCheckIntervalMs: options.containerCheckIntervalMs } : {}),
    });
    fixture.connectString = fixture.server.connectString;
  });
  afterAll(async () => {
    await fixture.server?.stop();
  });
  return fixture;
}

/**
 * Connection options for tests that hold or wait for locks but are not about sessions ending (the
 * default of useConnections and startLockApp): the longest session the test servers grant (20
 * ticks, 4 s) and a lease margin under a third of it, so that the lease runs 3 s and the C client's
 * own pings (every third of the timeout) keep it. With 1.5 s sessions the lease is 375 ms, kept only
 * by renewal reads: a loaded machine that holds up the test process's event loop for that long ends
 * the session and loses its locks, as the lease is meant to, in a test that was about something else.
 */
export const STEADY_SESSION = { sessionTimeoutMs: 4000, leaseMarginMs: 1000 } as const;

/**
 * Connections opened by a test, closed after it: STEADY_SESSION unless `defaults` (for the file) or
 * the call's `options` say otherwise. A test about a session ending by timeout asks for a short one.
 */
export function useConnections(fixture: ZooKeeperFixture, defaults: Partial<ZkConnectionOptions> = STEADY_SESSION) {
  const open = new Set<ZkConnection>();
  afterEach(() => {
    for (const connection of open) connection.close();
    open.clear();
  });
  return async (options: Partial<ZkConnectionOptions> = {}): Promise<ZkConnection> => {
    // A call that names its own session timeout does not take the file's lease margin with it.
    const { leaseMarginMs, ...session } = defaults;
    const fromFile = options.sessionTimeoutMs === undefined && leaseMarginMs !== undefined ? { ...session, leaseMarginMs } : session;
    const connection = new ZkConnection({ connectionString: fixture.connectString, sessionTimeoutMs: STEADY_SESSION.sessionTimeoutMs, ...fromFile, ...options });
    open.add(connection);
    await connection.connect();
    return connection;
  };
}

/**
 * A proxy in front of the fixture's first server, started by a test when it calls the function this
 * returns, and closed after that test.
 */
export function useZkProxy(fixture: ZooKeeperFixture): () => Promise<ZkProxy> {
  let proxy: ZkProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });
  return async () => {
    const [host, port] = fixture.connectString.split(',')[0]!.split(':');
    proxy = await startZkProxy({ host: host!, port: Number(port) });
    return proxy;
  };
}

/** A unique root path per test, so tests sharing a server never see each other's nodes. */
let roots = 0;
export function uniqueRoot(name: string): string {
  roots += 1;
  return `/test-${process.pid}-${Date.now().toString(36)}-${roots}-${name.replace(/[^a-z0-9]/gi, '')}`;
}

/** Children of a path ([] when it does not exist), read through a connection. */
export async function childrenOf(connection: ZkConnection, path: string): Promise<string[]> {
  const session = await connection.session();
  try {
    return (await session.getChildren(path)).children.sort();
  } catch (error) {
    if (error instanceof ZkNoNodeError) return [];
    throw error;
  }
}

export async function exists(connection: ZkConnection, path: string): Promise<boolean> {
  const session = await connection.session();
  try {
    await session.getChildren(path);
    return true;
  } catch (error) {
    if (error instanceof ZkNoNodeError) return false;
    throw error;
  }
}

/** Waits until `path` has exactly `count` children (a queue reached a length). */
export function queueLength(connection: ZkConnection, path: string, count: number): Promise<boolean> {
  return eventually(async () => (await childrenOf(connection, path)).length === count, { what: `${count} nodes under ${path}` });
}


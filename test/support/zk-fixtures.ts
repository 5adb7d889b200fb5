/**
 * Per-file test fixtures: a real ZooKeeper (its own, or the one ZK_CONNECT names), connections that
 * are closed after each test, and read-only views of the server's state.
 */
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { ZkConnection, type ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.js';
import { ZkNoNodeError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session.js';
import { fourLetter, startZkServer, type ZkServer } from './zk-server.js';

export interface ZooKeeperFixture {
  /** Connect string of the server under test. */
  readonly connectString: string;
  /** The server process, when this file started its own (undefined under ZK_CONNECT). */
  readonly server: ZkServer | undefined;
}

/**
 * A ZooKeeper for this test file: the one in ZK_CONNECT, or a standalone server started for the file
 * (always its own when `own` is set, for tests that stop or restart it).
 */
export function useZooKeeper(options: { own?: boolean } = {}): ZooKeeperFixture {
  const fixture: { connectString: string; server: ZkServer | undefined } = { connectString: '', server: undefined };
  beforeAll(async () => {
    const external = process.env.ZK_CONNECT;
    if (external && !options.own) {
      fixture.connectString = external;
      return;
    }
    fixture.server = await startZkServer();
    fixture.connectString = fixture.server.connectString;
  });
  afterAll(async () => {
    await fixture.server?.stop();
  });
  return fixture;
}

/** Connections opened by a test, closed after it. */
export function useConnections(fixture: ZooKeeperFixture) {
  const open = new Set<ZkConnection>();
  afterEach(() => {
    for (const connection of open) connection.close();
    open.clear();
  });
  return async (options: Partial<ZkConnectionOptions> = {}): Promise<ZkConnection> => {
    const connection = new ZkConnection({ connectionString: fixture.connectString, sessionTimeoutMs: 1500, ...options });
    open.add(connection);
    await connection.connect();
    return connection;
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

/** Polls a condition on real state until it holds, failing after `timeoutMs` (a bound, not a measurement). */
export async function eventually<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 15_000, what = 'condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Watches the server holds, per path (`wchp`), as path -> number of sessions watching it. */
export async function watchesByPath(connectString: string): Promise<Map<string, number>> {
  const text = await fourLetterTo(connectString, 'wchp');
  const watches = new Map<string, number>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('/')) {
      current = line.trim();
      watches.set(current, 0);
    } else if (current && /^\s+0x[0-9a-f]+/.test(line)) {
      watches.set(current, (watches.get(current) ?? 0) + 1);
    }
  }
  return watches;
}

export function fourLetterTo(connectString: string, command: string): Promise<string> {
  const [host, port] = connectString.split(',')[0]!.split('/')[0]!.split(':');
  return fourLetter(Number(port), command, host);
}

/**
 * Expires a session on purpose, the standard way: open a second handle with the same id and password,
 * then close it, and the server ends the session. The original client may reconnect in between and
 * take the session back (the close then fails as "session moved"), so repeat until `dump` no longer
 * lists the session.
 */
export async function expireSession(connectString: string, credentials: { id: string; password: string }): Promise<void> {
  for (let attempt = 1; attempt <= 20; attempt++) {
    await attachAndClose(connectString, credentials);
    const gone = await eventually(
      async () => !(await fourLetterTo(connectString, 'dump')).includes(`0x${credentials.id}`),
      { timeoutMs: 2000, what: 'the session to end' },
    ).catch(() => false);
    if (gone) return;
  }
  throw new Error(`could not expire session 0x${credentials.id}`);
}

async function attachAndClose(connectString: string, credentials: { id: string; password: string }): Promise<void> {
  const require = createRequire(import.meta.url);
  const ZooKeeper = require('zookeeper') as new (config: object) => {
    once(event: string, fn: () => void): void;
    init(config: object): void;
    close(): void;
  };
  const handle = new ZooKeeper({
    connect: connectString,
    timeout: 1500,
    debug_level: 0,
    host_order_deterministic: false,
    client_id: credentials.id,
    client_password: credentials.password,
  });
  const attached = await new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('could not attach to the session to expire it')), 10_000);
    handle.once('connect', () => {
      clearTimeout(timer);
      resolve(true);
    });
    // The server refused the id: the session is already gone.
    handle.once('close', () => {
      clearTimeout(timer);
      resolve(false);
    });
    handle.init({});
  });
  if (attached) handle.close();
}

/** Waits until `path` has exactly `count` children (a queue reached a length). */
export function queueLength(connection: ZkConnection, path: string, count: number): Promise<boolean> {
  return eventually(async () => (await childrenOf(connection, path)).length === count, { what: `${count} nodes under ${path}` });
}

/**
 * A session source that counts the requests its sessions send, per operation: how a test sees which
 * client a release woke (a woken waiter reads the queue again). Counts, never times.
 */
export function countingSessions(connection: ZkConnection) {
  const counts = { getChildren: 0, getData: 0, setData: 0, watchNode: 0, create: 0, delete: 0 };
  const counted = new Set(Object.keys(counts));
  const wrapped = new WeakMap<object, ZkSessionApi>();
  const source = {
    async session(signal?: AbortSignal): Promise<ZkSessionApi> {
      const session = await connection.session(signal);
      let proxy = wrapped.get(session);
      if (!proxy) {
        proxy = new Proxy(session, {
          get(target, property, receiver) {
            const value: unknown = Reflect.get(target, property, receiver);
            if (typeof value !== 'function') return value;
            return (...args: unknown[]) => {
              if (typeof property === 'string' && counted.has(property)) counts[property as keyof typeof counts] += 1;
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        wrapped.set(session, proxy);
      }
      return proxy;
    },
  };
  return { source, counts };
}

/** Looking at and acting on a real server's sessions and watches, for tests. No test-runner dependency. */
import { ZkLockError } from '../errors.js';
import { loadNativeModule } from '../zookeeper/native-client.js';
import type { ZkConnection } from '../zookeeper/zk-connection.js';
import { fourLetterTo } from './zk-net.js';

/** A session's id and password (hex), as `ZkConnection.sessionCredentials()` returns them. */
export interface ZkSessionCredentials {
  id: string;
  password: string;
}

/** Options of eventually(): how long and how often to check. */
export interface EventuallyOptions {
  /** Give up after this long, in ms (a bound on the wait, never a measurement). @default 15000 */
  timeoutMs?: number;
  /** Named in the error on timeout. @default 'condition' */
  what?: string;
  /** Pause between checks, in ms. @default 50 */
  intervalMs?: number;
}

/**
 * Checks a condition on real state until it returns a truthy value (returned), rejecting after
 * `timeoutMs` with the last error the check threw.
 */
export async function eventually<T>(check: () => Promise<T> | T, options: EventuallyOptions = {}): Promise<T> {
  const { timeoutMs = 15_000, what = 'condition', intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new ZkLockError(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The watches a server holds, per path (`wchp`), as path -> number of sessions watching it. */
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

/**
 * Makes the server expire a session now, as if its client had been silent for the whole session
 * timeout: its ephemeral nodes (its locks) are deleted and the client is told its session expired
 * (a LockService's held locks then abort their signal with LockLostError).
 *
 * `expireSession(connection)` expires the current session of a ZkConnection (pass it to
 * ZkLockModule as `connection` to reach a LockService's session); `expireSession(connectString,
 * credentials)` any session whose id and password you have.
 *
 * The standard way: a second handle attaches to the session with its id and password, then closes
 * it. The original client may reconnect in between and take the session back, so this repeats until
 * `dump` no longer lists the session.
 * @param leader for an ensemble: where to read `dump` (it lists sessions only on a standalone server or the leader)
 */
export async function expireSession(connection: ZkConnection, leader?: () => Promise<string>): Promise<void>;
export async function expireSession(connectString: string, credentials: ZkSessionCredentials, leader?: () => Promise<string>): Promise<void>;
export async function expireSession(
  target: ZkConnection | string,
  second?: ZkSessionCredentials | (() => Promise<string>),
  third?: () => Promise<string>,
): Promise<void> {
  let connectString: string;
  let credentials: ZkSessionCredentials | undefined;
  let leader: (() => Promise<string>) | undefined;
  if (typeof target === 'string') {
    connectString = target;
    credentials = second as ZkSessionCredentials;
    leader = third;
  } else {
    connectString = target.connectionString;
    credentials = target.sessionCredentials();
    leader = second as (() => Promise<string>) | undefined;
    if (!credentials) throw new ZkLockError('expireSession: the connection has no live session (call connect() first, or it is closed).');
  }
  const dumpFrom = leader ?? (async () => connectString);
  // A closed session leaves `dump` within about 100 ms; one the client took back stays listed. A short
  // look per attempt (tried again up to the same 40 s in all) keeps the usual retry from costing seconds.
  for (let attempt = 1; attempt <= 80; attempt++) {
    await attachAndClose(connectString, credentials);
    const gone = await eventually(async () => !(await fourLetterTo(await dumpFrom(), 'dump')).includes(`0x${credentials.id}`), {
      timeoutMs: 500,
      what: 'the session to end',
    }).catch(() => false);
    if (gone) return;
  }
  throw new ZkLockError(`Could not expire session 0x${credentials.id}: the client kept taking it back, or the server never dropped it.`);
}

async function attachAndClose(connectString: string, credentials: ZkSessionCredentials): Promise<void> {
  const Native = loadNativeModule();
  const config = {
    connect: connectString,
    timeout: 1500,
    debug_level: 0,
    host_order_deterministic: false,
    client_id: credentials.id,
    client_password: credentials.password,
  };
  const handle = new Native(config);
  const attached = await new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => {
      handle.close();
      reject(new ZkLockError(`expireSession: could not reach ${connectString} within 10 s to attach to the session`));
    }, 10_000);
    handle.once('connect', () => {
      clearTimeout(timer);
      resolve(true);
    });
    // The server refused the id: the session is already gone.
    handle.once('close', () => {
      clearTimeout(timer);
      resolve(false);
    });
    handle.native.init(config);
  });
  if (attached) handle.close();
}

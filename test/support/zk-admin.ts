/**
 * Administrative views and actions on a ZooKeeper server, with no test-runner dependency: used by
 * the Vitest fixtures and by the fault suite's harness (which also runs as a plain Node program).
 */
import { createRequire } from 'node:module';
import { fourLetter } from './zk-server.js';

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
export async function expireSession(
  connectString: string,
  credentials: { id: string; password: string },
  /** Where to read `dump` (it lists sessions only on a standalone server or an ensemble's leader). */
  leader: () => Promise<string> = async () => connectString,
): Promise<void> {
  for (let attempt = 1; attempt <= 20; attempt++) {
    await attachAndClose(connectString, credentials);
    const gone = await eventually(
      async () => !(await fourLetterTo(await leader(), 'dump')).includes(`0x${credentials.id}`),
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


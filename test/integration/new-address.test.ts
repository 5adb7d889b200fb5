/**
 * A server that comes back under the same name at a new address (a Kubernetes pod rescheduled): the
 * client, named the server by host name, finds it again and keeps its session. The client runs in a
 * mount namespace of its own (`unshare --mount`, root only) whose /etc/hosts the test rewrites; the
 * server restarts on 127.0.0.2 with the same data directory (a standalone server keeps its sessions
 * across a restart). The control: a client given the address instead of the name loses its session.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { JavaZkServer } from '../../lib/testing/zk-test-server.js';
import { makeDataDir } from '../../lib/testing/zk-process.js';
import { freePorts } from '../support/zk-server.js';
import { uniqueRoot } from '../support/zk-fixtures.js';

const CLIENT = fileURLToPath(new URL('../../build/test/support/moving-client.js', import.meta.url));
const NAME = 'zk-moving.test';
/**
 * A 2 s tick lets a session outlast the server's restart on a loaded machine (sessions up to 40 s);
 * a standalone server's answers prove the session alive, so the lease margin is small.
 */
const TICK_MS = 2000;

function canUnshare(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('unshare', ['--mount', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!canUnshare())('a server back under the same name at a new address', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The session is lost unless the client is back within `sessionMs`. */
  async function scenario(byName: boolean, sessionMs: number) {
    if (!existsSync(CLIENT)) throw new Error(`${CLIENT} is missing: run \`npm run build:sample\` first`);
    const [port] = await freePorts(1);
    const dataDir = makeDataDir();
    const first = new JavaZkServer(1, port!, dataDir, undefined, { tickMs: TICK_MS });
    cleanups.push(() => first.stop());
    await first.start();
    const hosts = join(mkdtempSync(join(tmpdir(), 'zk-hosts-')), 'hosts');
    writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.1 ${NAME}\n`);
    const connect = `${byName ? NAME : '127.0.0.1'}:${port}`;
    const child: ChildProcess = spawn('unshare', ['--mount', 'sh', '-c', `mount --bind ${hosts} /etc/hosts && exec "${process.execPath}" ${CLIENT}`], {
      env: { ...process.env, CONNECT: connect, ROOT: uniqueRoot('moving'), SESSION_MS: String(sessionMs), MARGIN_MS: '1000' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    cleanups.push(() => child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async (): Promise<Record<string, unknown>> => JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
    const held = await next();
    expect(held.event).toBe('held');
    // The server moves: stopped, the name now says 127.0.0.2 (rewritten in place: the bind mount
    // shows the same file), started there on the same port and data.
    await first.stop();
    writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.2 ${NAME}\n`);
    const moved = new JavaZkServer(1, port!, dataDir, undefined, { tickMs: TICK_MS, host: '127.0.0.2' });
    cleanups.push(() => moved.stop());
    await moved.start();
    child.stdin!.write('check\n');
    return next();
  }

  it('reconnects by name to the new address: same session, lock still held, a new acquire works', async () => {
    const checked = await scenario(true, 30_000);
    expect(checked).toMatchObject({ event: 'checked', sameSession: true, lost: false, second: true });
    expect(checked.states).not.toContain('lost');
  }, 120_000);

  it('a client given the old address instead loses its session (the control)', async () => {
    // Shorter: the control ends once the session is given up.
    const checked = await scenario(false, 8000);
    expect(checked).toMatchObject({ event: 'checked', sameSession: false, lost: true });
  }, 120_000);
});

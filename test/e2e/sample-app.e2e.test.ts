/**
 * The sample app as users run it: separate Node processes (build/sample-app/main.js, built by
 * `npm test` before Vitest starts), one real ZooKeeper, HTTP in and out.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childrenOf, STEADY_SESSION, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';
import { freePorts } from '../support/zk-server.js';

const MAIN = join(process.cwd(), 'build/sample-app/main.js');

interface App {
  url: string;
  child: ChildProcess;
  /** How the process ended: `exit 0`, or `signal SIGTERM` (Nest re-raises the signal once shut down). */
  exited: Promise<string>;
}

async function startApp(name: string, env: Record<string, string>): Promise<App> {
  const [port] = await freePorts(1);
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, INSTANCE: name, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit ${code}`)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start`)), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith(`ready ${name}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => reject(new Error(`${name} exited during start-up`)));
  });
  return { url: `http://127.0.0.1:${port}`, child, exited };
}

describe('the sample app: several processes, HTTP, one ZooKeeper', () => {
  // The sample app asks for the default 15 s session; the test servers grant 4 s unless told, and
  // its lease (a quarter) would then be 1 s, which a loaded machine can let run out mid-request.
  const zk = useZooKeeper({ config: ['maxSessionTimeout=15000'] });
  const connect = useConnections(zk, STEADY_SESSION);
  const apps: App[] = [];
  let workDir: string;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npx tsc -p tsconfig.sample.json\` (npm test does)`);
    workDir = mkdtempSync(join(tmpdir(), 'zk-lock-e2e-'));
    const env = { SHUTDOWN_GRACE_MS: '300', ZK_CONNECT: zk.connectString, COUNTER_FILE: join(workDir, 'counter.json'), CRON_LOG_FILE: join(workDir, 'cron.log') };
    apps.push(...(await Promise.all(['a', 'b'].map((name) => startApp(name, env)))));
  });
  afterAll(async () => {
    for (const app of apps) app.child.kill('SIGKILL');
    rmSync(workDir, { recursive: true, force: true });
  });

  async function round(endpoint: string, requests: number): Promise<{ value: number; statuses: number[] }> {
    await fetch(`${apps[0]!.url}/counter/reset`, { method: 'POST' });
    const responses = await Promise.all(
      Array.from({ length: requests }, (_, i) => fetch(`${apps[i % apps.length]!.url}/counter/${endpoint}`, { method: 'POST' })),
    );
    const { value } = (await (await fetch(`${apps[0]!.url}/counter`)).json()) as { value: number };
    return { value, statuses: [...new Set(responses.map((r) => r.status))] };
  }

  it('loses updates without the lock and none with @DistributedLock or withLock, across two processes', async () => {
    const unsafe = await round('unsafe', 200);
    expect(unsafe.value).toBeLessThan(200);
    const decorated = await round('decorated', 200);
    expect(decorated).toEqual({ value: 200, statuses: [201] });
    const direct = await round('direct', 200);
    expect(direct).toEqual({ value: 200, statuses: [201] });
  });

  it('SIGTERM gives the running handler its grace period, then tells it, releases the lock, and the other process goes on', async () => {
    const observer = await connect();
    const [a, b] = apps as [App, App];
    const holding = fetch(`${a.url}/counter/hold/30000`, { method: 'POST' });
    await eventually(async () => (await childrenOf(observer, '/demo-locks/counter')).length === 1, { what: 'a holds' });
    a.child.kill('SIGTERM');
    const answer = await holding;
    expect(await answer.json()).toEqual({ held: 'until lost' });
    expect(['exit 0', 'signal SIGTERM']).toContain(await a.exited);
    expect(await childrenOf(observer, '/demo-locks/counter')).toEqual([]);
    const next = await fetch(`${b.url}/counter/decorated`, { method: 'POST' });
    expect(next.status).toBe(201);
  });
});

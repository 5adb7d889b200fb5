import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * scripts/lib/registry.sh bounds every step of the scripts that reaches a package registry. Here a
 * registry that accepts connections and never answers (the stall seen in a packaging install) meets
 * a real `npm install`: the step must end within its bound, be tried again, and end with one line
 * saying which step stalled and what to run.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const registrySh = join(root, 'scripts/lib/registry.sh');

interface Run {
  code: number | null;
  stderr: string;
}

/** Sources registry.sh in bash and runs `registry_run` with the arguments. */
function registryRun(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const script = `source "$0"; script_name=check; registry_run "$@"`;
  return new Promise((resolvePromise, reject) => {
    const child = spawn('bash', ['-c', script, registrySh, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stderr }));
  });
}

describe('registry steps are bounded (scripts/lib/registry.sh)', () => {
  let work: string;
  let silent: Server;
  const sockets = new Set<Socket>();
  let port = 0;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-registry-'));
    writeFileSync(join(work, 'package.json'), '{ "name": "stalled-app", "private": true }\n');
    // Accepts, reads, never answers.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.resume();
    });
    await new Promise<void>((ready) => silent.listen(0, '127.0.0.1', ready));
    port = (silent.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((closed) => silent.close(() => closed()));
    rmSync(work, { recursive: true, force: true });
  });

  it('an npm install on a registry that never answers ends at its bound, is tried again, and says what to run', async () => {
    const log = join(work, 'install.log');
    const run = await registryRun(
      ['npm install in stalled-app', '3', log, 'cd app && npm install', 'npm', 'install', '--prefix', work, '--no-audit', '--no-fund', 'left-pad@1.3.0'],
      // An empty cache, so npm must ask the registry; npm's own fetch timeout well past the bound.
      { npm_config_registry: `http://127.0.0.1:${port}/`, npm_config_cache: join(work, 'cache'), npm_config_fetch_timeout: '600000' },
    );
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      `check: FAIL: npm install in stalled-app stalled (no end within 3s) after 2 attempt(s); log: ${log}. Run by hand: cd app && npm install`,
    );
    expect(run.stderr).toContain('check: npm install in stalled-app stalled (no end within 3s); trying again (attempt 2 of 2)');
    // Nothing of npm's is left connected to the registry.
    await new Promise((settled) => setTimeout(settled, 200));
    expect(sockets.size).toBe(0);
  });

  it('the steps of one script share its registry budget: once spent, a step is not tried and says so', async () => {
    const log = join(work, 'budget.log');
    const run = await registryRun(['a slow step', '30', log, 'npm install', 'sleep', '30'], { REGISTRY_BUDGET: '7', REGISTRY_ATTEMPTS: '5' });
    expect(run.code).toBe(1);
    // The first try is cut to the 7 s left; the next one has less than 5 s and is not made.
    expect(run.stderr).toContain('check: a slow step stalled (no end within 7s); trying again (attempt 2 of 5)');
    expect(run.stderr.trim().split('\n').at(-1)).toBe(
      `check: FAIL: a slow step not tried: the 7s registry budget of this script is spent (REGISTRY_BUDGET); log: ${log}. Run by hand: npm install`,
    );
  });

  it('a failure that is not the network is not tried again', async () => {
    const run = await registryRun(['a script denied', '10', join(work, 'denied.log'), 'npm install', 'sh', '-c', 'echo "npm error code ESTRICTALLOWSCRIPTS"; exit 1']);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('trying again');
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^check: FAIL: a script denied failed \(exit 1\) after 1 attempt\(s\); log: .*\. Run by hand: npm install$/);
  });

  it('a network error is tried again, and a try that succeeds ends the step', async () => {
    const marker = join(work, 'second-try');
    const run = await registryRun([
      'a flaky fetch',
      '10',
      join(work, 'flaky.log'),
      'npm install',
      'sh',
      '-c',
      `if [ -e "${marker}" ]; then exit 0; fi; touch "${marker}"; echo "npm error code ECONNRESET"; exit 1`,
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('check: a flaky fetch failed on the network (exit 1); trying again (attempt 2 of 2)');
  });
});

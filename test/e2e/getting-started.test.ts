/**
 * docs/getting-started.md, built and run as the page says. Every code block whose first line names
 * a file (`// src/x.ts`, `# .env`) is written to that file of a new app, on top of what `nest new`
 * (Nest CLI 12, its default ES module template) makes: package.json, tsconfig.json,
 * tsconfig.build.json, vitest.config.ts. The app is compiled as `nest build` does by default (tsc
 * with tsconfig.build.json), started twice on one real ZooKeeper, and checked for what the page says
 * the reader sees; then its own test runs under Vitest, as `npm test` runs it in such an app.
 *
 * The app sits under build/ and finds its packages in this repository's node_modules (the same
 * Nest, @nestjs/config, @nestjs/schedule and Vitest a new app installs), nestjs-zk-lock being this
 * repository's build (`npm run build`) copied into the app's node_modules: no registry, and one
 * copy of Nest. The packed tarball in a freshly installed app is test-packaging.sh's job.
 */
import 'reflect-metadata';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { eventually, useZooKeeper } from '../support/zk-fixtures.js';

const run = promisify(execFile);
const repo = process.cwd();
const PAGE = join(repo, 'docs/getting-started.md');
/** Bounds for a broken app, not measurements. */
const START_BOUND_MS = 100_000;
const TICKS_BOUND_MS = 60_000;

/** The files of the page: each fenced block whose first line is a comment naming a path. */
function pageFiles(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const [, body] of markdown.matchAll(/^ *```[a-z]*\n([\s\S]*?)^ *```$/gm)) {
    const named = /^(?:\/\/|#) ((?:src|test)\/[\w./-]+\.ts|\.env)\n/.exec(body!);
    if (named) files.set(named[1]!, body!.slice(named[0].length));
  }
  return files;
}

/** What `nest new` (CLI 12, ES modules) writes besides src/, as its templates have it. */
const NEST_NEW: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'shop', version: '0.0.1', private: true, type: 'module', scripts: { build: 'nest build', test: 'vitest run' } }, null, 2),
  'tsconfig.json': JSON.stringify(
    {
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        resolvePackageJsonExports: true,
        esModuleInterop: true,
        isolatedModules: true,
        declaration: true,
        removeComments: true,
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
        allowSyntheticDefaultImports: true,
        target: 'ES2023',
        sourceMap: true,
        outDir: './dist',
        rootDir: '.',
        incremental: true,
        skipLibCheck: true,
        strict: true,
        strictPropertyInitialization: false,
        types: ['vitest/globals', 'node'],
      },
    },
    null,
    2,
  ),
  'tsconfig.build.json': JSON.stringify(
    { extends: './tsconfig.json', compilerOptions: { rootDir: './src' }, include: ['src'], exclude: ['node_modules', 'test', 'dist', '**/*spec.ts'] },
    null,
    2,
  ),
  // The template's config, less its vite-tsconfig-paths plugin (path aliases; this app has none).
  'vitest.config.ts': "import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({\n  test: { globals: true, root: './', include: ['**/*.spec.ts'] },\n});\n",
};

interface Instance {
  readonly port: number;
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('docs/getting-started.md, built from its code blocks', () => {
  // A server that grants the page's default 15 s session, as one with ZooKeeper's own tick (2 s)
  // does: the test server's 200 ms tick would cut it to 4 s (a 1 s lease), which a loaded machine
  // ran out, printing a session-lost warning where the page promises silence.
  const zk = useZooKeeper({ config: ['maxSessionTimeout=40000'] });
  const app = join(repo, 'build', `getting-started-${process.pid}`);
  const instances: Instance[] = [];
  let observer: LockService;

  async function start(): Promise<Instance> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), NO_COLOR: '1' };
    delete env.NODE_ENV;
    delete env.ZK_CONNECT; // from .env, as the page says
    const child = spawn(process.execPath, ['dist/main.js'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const instance = { port, child, lines, exited };
    instances.push(instance);
    await eventually(() => lines.some((line) => line.includes('Nest application successfully started')) || child.exitCode !== null, {
      timeoutMs: START_BOUND_MS,
      what: `the instance on port ${port} started`,
    });
    expect(child.exitCode, lines.join('\n')).toBeNull();
    return instance;
  }

  const url = (instance: Instance, path: string) => `http://127.0.0.1:${instance.port}${path}`;
  const role = async (instance: Instance) => ((await (await fetch(url(instance, '/relay'))).json()) as { role: string }).role;
  const leads = (instance: Instance) => instance.lines.filter((line) => line.includes('This instance leads the relay')).length;

  beforeAll(async () => {
    if (!existsSync(join(repo, 'dist/index.mjs'))) throw new Error('dist/ is missing: run `npm run build` (npm test does)');
    rmSync(app, { recursive: true, force: true });
    const files = pageFiles(readFileSync(PAGE, 'utf8'));
    for (const [path, text] of [...Object.entries(NEST_NEW), ...files]) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      writeFileSync(join(app, path), text);
    }
    // The page's .env names a local server; this test's server is elsewhere.
    writeFileSync(join(app, '.env'), files.get('.env')!.replace(/^ZK_CONNECT=.*$/m, `ZK_CONNECT=${zk.connectString}`));
    // nestjs-zk-lock as an install lays it out: package.json and dist/ in node_modules (so that
    // Vitest loads it as a dependency), the native addon this repository built.
    const installed = join(app, 'node_modules/nestjs-zk-lock');
    mkdirSync(installed, { recursive: true });
    cpSync(join(repo, 'package.json'), join(installed, 'package.json'));
    cpSync(join(repo, 'dist'), join(installed, 'dist'), { recursive: true });
    symlinkSync(join(repo, 'native'), join(installed, 'native'), 'dir');
    await run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: app });
    observer = new LockService({ connectionString: zk.connectString, rootAclCheck: 'off' });
    await observer.onModuleInit();
  });

  afterAll(async () => {
    for (const { child } of instances) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(instances.map(({ exited }) => exited));
    await observer?.onApplicationShutdown();
    rmSync(app, { recursive: true, force: true });
  });

  it('has the files the app needs, each named once', () => {
    const files = pageFiles(readFileSync(PAGE, 'utf8'));
    expect([...files.keys()].sort()).toEqual(
      ['.env', 'src/app.module.ts', 'src/main.ts', 'src/order.store.ts', 'src/orders.controller.ts', 'src/orders.service.spec.ts', 'src/orders.service.ts', 'src/relay.service.ts', 'src/report.job.ts'].sort(),
    );
  });

  it('runs two instances as section 10 says: 409 across them, one report per tick, one leader that moves on SIGTERM', async () => {
    const [a, b] = [await start(), await start()];
    // One leader, decided when start-up resolved.
    expect([await role(a), await role(b)].sort()).toEqual(['follower', 'leader']);
    expect(leads(a) + leads(b)).toBe(1);

    // The export on one instance makes the other answer 409 while it runs (once it holds the lock,
    // as an observer on the same ZooKeeper sees).
    const first = fetch(url(a, '/export'), { method: 'POST' });
    await eventually(async () => (await observer.inspect('orders-export')).holders.length === 1, { what: 'the first export holding its lock' });
    expect((await fetch(url(b, '/export'), { method: 'POST' })).status).toBe(409);
    expect(await (await first).json()).toEqual({ exported: true });

    // A service call under withLock, through the controller.
    const paid = await fetch(url(b, '/orders/42/pay'), { method: 'POST' });
    expect(await paid.json()).toEqual({ id: '42', status: 'paid' });

    // Three ticks of the report: each on one instance only (Nest's log lines carry the second).
    const reports = () => [...a.lines, ...b.lines].filter((line) => line.includes('Report built for this tick'));
    await eventually(() => reports().length >= 3, { timeoutMs: TICKS_BOUND_MS, what: 'three reports' });
    const seconds = reports().map((line) => /(\d+:\d+:\d+)/.exec(line)?.[1]);
    expect(new Set(seconds).size).toBe(seconds.length);
    // Nothing from the library per tick or per lock.
    expect([...a.lines, ...b.lines].filter((line) => line.includes('[ZkLock]'))).toEqual([]);

    // The leader moves on SIGTERM (enableShutdownHooks).
    const [leader, follower] = (await role(a)) === 'leader' ? [a, b] : [b, a];
    leader.child.kill('SIGTERM');
    await eventually(() => leads(follower) === 1, { what: 'the other instance leads' });
    expect(await role(follower)).toBe('leader');
    await leader.exited;
  });

  it("passes its own test (section 9) under the app's Vitest", async () => {
    const vitest = join(repo, 'node_modules/vitest/vitest.mjs');
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    const { stdout } = await run(process.execPath, [vitest, 'run'], { cwd: app, env }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the page's test failed:\n${error.stdout}\n${error.stderr}`);
    });
    expect(stdout).toMatch(/Tests +3 passed/);
  });
});

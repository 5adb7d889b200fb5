/**
 * Without @opentelemetry/api the library works and loads nothing of OpenTelemetry: a Node process
 * running the published build (dist/, `npm run build`) where the package cannot be resolved takes
 * and releases locks on a real ZooKeeper, and its require.cache holds no @opentelemetry module. The
 * control, the same process with the package resolvable, shows the check would see it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useZooKeeper } from '../support/zk-fixtures.js';

const DIST = join(process.cwd(), 'dist/index.js');

// HIDE_OTEL makes every @opentelemetry/* unresolvable, as in an app that does not depend on it.
const script = `
const Module = require('node:module');
const resolve = Module._resolveFilename;
if (process.env.HIDE_OTEL) {
  Module._resolveFilename = function (request, ...rest) {
    if (request.startsWith('@opentelemetry/')) {
      const error = new Error("Cannot find module '" + request + "'");
      error.code = 'MODULE_NOT_FOUND';
      throw error;
    }
    return resolve.call(this, request, ...rest);
  };
}
require('reflect-metadata');
const { LockService } = require(process.env.DIST);
(async () => {
  const options = { connectionString: process.env.CONNECT, rootPath: '/tracing-absent-' + process.pid, rootAclCheck: 'off' };
  if (process.env.TRACING === 'false') options.tracing = false;
  const locks = new LockService(options);
  await locks.onModuleInit();
  const handle = await locks.acquire('job');
  const token = handle.fencingToken;
  await handle.release();
  const inside = await locks.withLock('job', (lock) => lock.fencingToken > token);
  await locks.beforeApplicationShutdown();
  await locks.onApplicationShutdown();
  const otel = Object.keys(require.cache).filter((file) => file.includes('@opentelemetry'));
  console.log(JSON.stringify({ token, inside, otel }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

function run(connect: string, env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, DIST, CONNECT: connect, ...env },
    timeout: 60_000,
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as { token: string; inside: boolean; otel: string[] };
}

describe('tracing when @opentelemetry/api is absent', () => {
  const zk = useZooKeeper();

  it('locks work and no @opentelemetry module is loaded', () => {
    if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npm run build\` (npm test does)`);
    const absent = run(zk.connectString, { HIDE_OTEL: '1' });
    expect(absent.token).toMatch(/^\d+$/);
    expect(absent.inside).toBe(true);
    expect(absent.otel).toEqual([]);
  });

  it('control: with the package installed, the same process loads @opentelemetry/api', () => {
    const present = run(zk.connectString, {});
    expect(present.otel.some((file) => file.includes('/@opentelemetry/api/'))).toBe(true);
  });

  it('tracing: false loads nothing of OpenTelemetry, even with the package installed', () => {
    const off = run(zk.connectString, { TRACING: 'false' });
    expect(off.inside).toBe(true);
    expect(off.otel).toEqual([]);
  });
});

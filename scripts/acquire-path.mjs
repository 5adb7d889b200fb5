// How much of the package one lock runs through: V8's precise coverage (node:inspector) of one warm,
// uncontended `withLock(name, async () => {})` on a LockService with no event listeners, counting
// the package's functions that ran (count > 0), their calls and the files they are in.
//
// usage: npm run build && node scripts/acquire-path.mjs [--runs N] [--list] [--json] [--dist <dir>] [--decorated]
//   --runs N     measure N times (each a fresh call after the same warm-up), print each and the median
//   --list       also print every function that ran, by file, with its call count (a function with
//                no name of its own is shown inside the one that encloses it: `call>(anonymous)`)
//   --json       print the runs as JSON instead: [{ functions, calls, files: { file: [{ name, count }] } }]
//                (test/integration/acquire-path-walk.test.ts checks docs/internals.md against it)
//   --dist d     measure another build (e.g. a copy of main's dist/ kept for a before/after; inside
//                the repository, so that it finds @nestjs in node_modules)
//   --decorated  measure one call of a `@DistributedLock(name)` method instead (`async run() {}` on a
//                provider of a Nest application context: the module, its explorer, the registry)
//
// It starts its own ZooKeeper (the testing kit's startZkServer) and measures the built package
// (dist/, what users load), loaded through its CommonJS entry, as `require` and `import` both reach it.
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const dist = resolve(option('--dist') ?? join(ROOT, 'dist'));
const runs = Number(option('--runs') ?? 1);
const list = args.includes('--list');
const json = args.includes('--json');
const decorated = args.includes('--decorated');
/** The acquires before the one measured: the lock's parent exists, the code is warm (issue 36). */
const WARM_UP = 20;

const require = createRequire(join(dist, 'package.json'));
const { DistributedLock, LockService, ZkLockModule } = require(join(dist, 'index.js'));
const { startZkServer } = require(join(dist, 'testing', 'index.js'));
const distUrl = pathToFileURL(dist + sep).href;

// Empty lock parents reaped at ZooKeeper's own pace (not the tests' 200 ms), so the warm lock's parent
// stays; a 2 s tick, so the 15 s session is granted whole (the tests' 200 ms tick caps it at 4 s), and a
// 1 s lease margin: the lease's renewal (`check`, not part of an acquire) comes seconds apart, not
// every 250 ms, and a measured call meets it rarely.
const server = await startZkServer({ containerCheckIntervalMs: 60_000, tickMs: 2000 });
const options = { connectionString: server.connectString, logEvents: false, rootAclCheck: 'off', leaseMarginMs: 1000 };
const name = 'acquire-path';
const inspector = new Session();
inspector.connect();
let subject;
try {
  subject = decorated ? await decoratedMethod(options) : await plainWithLock(options);
  for (let i = 0; i < WARM_UP; i++) await subject.call();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const results = [];
  for (let run = 0; run < runs; run++) {
    await inspector.post('Profiler.takePreciseCoverage'); // resets the counts: only the next call is measured
    await subject.call();
    const { result } = await inspector.post('Profiler.takePreciseCoverage');
    results.push(countOurs(result));
  }
  await inspector.post('Profiler.stopPreciseCoverage');
  if (json) {
    console.log(JSON.stringify(results.map((r) => ({ functions: r.functions, calls: r.calls, files: Object.fromEntries(r.files) }))));
  } else {
    for (const [i, r] of results.entries()) {
      console.log(`run ${i + 1}: ${r.functions} functions in ${r.files.size} files (${r.calls} calls)`);
    }
    if (runs > 1) {
      const median = (pick) => results.map(pick).sort((a, b) => a - b)[Math.floor(results.length / 2)];
      console.log(`median: ${median((r) => r.functions)} functions in ${median((r) => r.files.size)} files (${median((r) => r.calls)} calls)`);
    }
    if (list) {
      for (const [file, fns] of [...results.at(-1).files].sort()) {
        console.log(`\n${file}`);
        for (const fn of fns) console.log(`  ${fn.count}\t${fn.name}`);
      }
    }
  }
} finally {
  inspector.disconnect();
  await subject?.close();
  await server.stop();
}

/** The default measure: `withLock(name, async () => {})` on a LockService made with `new`. */
async function plainWithLock(options) {
  const service = new LockService(options);
  const close = async () => {
    await service.beforeApplicationShutdown();
    await service.onApplicationShutdown();
  };
  try {
    await service.onModuleInit();
  } catch (error) {
    // Not yet `subject`, so the main `finally` cannot close it: its open session would keep the script running.
    await close().catch(() => undefined);
    throw error;
  }
  return { call: () => service.withLock(name, async () => {}), close };
}

/** `--decorated`: a provider's `@DistributedLock(name) async run() {}`, in a Nest application context. */
async function decoratedMethod(options) {
  require('reflect-metadata');
  const { Injectable, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  class Job {
    async run() {}
  }
  // What `@DistributedLock(name)` on `run` does, without decorator syntax.
  const method = Object.getOwnPropertyDescriptor(Job.prototype, 'run');
  Object.defineProperty(Job.prototype, 'run', DistributedLock(name)(Job.prototype, 'run', method) ?? method);
  Injectable()(Job);
  class App {}
  Module({ imports: [ZkLockModule.forRoot(options)], providers: [Job] })(App);
  const app = await NestFactory.createApplicationContext(App, { logger: false });
  const job = app.get(Job);
  return { call: () => job.run(), close: () => app.close() };
}

/** The package's functions that ran (count > 0), their calls, and the files they are in. */
function countOurs(scripts) {
  let functions = 0;
  let calls = 0;
  const files = new Map();
  for (const script of scripts) {
    if (!script.url.startsWith(distUrl)) continue;
    const file = relative(dist, fileURLToPath(script.url)).split(sep).join('/');
    for (const fn of script.functions) {
      const count = fn.ranges[0]?.count ?? 0;
      // The module's top-level function ran when it was loaded, not in this acquire.
      if (count === 0 || (fn.functionName === '' && fn.ranges[0]?.startOffset === 0)) continue;
      functions += 1;
      calls += count;
      if (!files.has(file)) files.set(file, []);
      files.get(file).push({ name: fn.functionName || `${enclosingName(script.functions, fn)}>(anonymous)`, count });
    }
  }
  return { functions, calls, files };
}

/** The name of the innermost named function around `fn` (by source range), or '' at the module's top. */
function enclosingName(functions, fn) {
  const { startOffset, endOffset } = fn.ranges[0];
  let best;
  for (const other of functions) {
    const range = other.ranges[0];
    if (other === fn || !other.functionName || range.startOffset > startOffset || range.endOffset < endOffset) continue;
    if (!best || range.endOffset - range.startOffset < best.ranges[0].endOffset - best.ranges[0].startOffset) best = other;
  }
  return best?.functionName ?? '';
}

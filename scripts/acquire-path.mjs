// How much of the package one lock runs through: V8's precise coverage (node:inspector) of one warm,
// uncontended `withLock(name, async () => {})` on a LockService with no event listeners, counting
// the package's functions that ran (count > 0), their calls and the files they are in.
//
// usage: npm run build && node scripts/acquire-path.mjs [--runs N] [--list] [--dist <dir>]
//   --runs N   measure N times (each a fresh withLock after the same warm-up), print each and the median
//   --list     also print every function that ran, by file, with its call count
//   --dist d   measure another build (e.g. a copy of main's dist/ kept for a before/after)
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
/** The acquires before the one measured: the lock's parent exists, the code is warm (issue 36). */
const WARM_UP = 20;

const require = createRequire(join(dist, 'package.json'));
const { LockService } = require(join(dist, 'index.js'));
const { startZkServer } = require(join(dist, 'testing', 'index.js'));
const distUrl = pathToFileURL(dist + sep).href;

// Empty lock parents reaped at ZooKeeper's own pace (not the tests' 200 ms), so the warm lock's parent stays.
const server = await startZkServer({ containerCheckIntervalMs: 60_000 });
const service = new LockService({ connectionString: server.connectString, logEvents: false, rootAclCheck: 'off' });
const inspector = new Session();
inspector.connect();
try {
  await service.onModuleInit();
  const name = 'acquire-path';
  for (let i = 0; i < WARM_UP; i++) await service.withLock(name, async () => {});
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const results = [];
  for (let run = 0; run < runs; run++) {
    await inspector.post('Profiler.takePreciseCoverage'); // resets the counts: only the next withLock is measured
    await service.withLock(name, async () => {});
    const { result } = await inspector.post('Profiler.takePreciseCoverage');
    results.push(countOurs(result));
  }
  await inspector.post('Profiler.stopPreciseCoverage');
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
      for (const fn of fns) console.log(`  ${fn.count}\t${fn.name || '(anonymous)'}`);
    }
  }
} finally {
  inspector.disconnect();
  await service.beforeApplicationShutdown();
  await service.onApplicationShutdown();
  await server.stop();
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
      files.get(file).push({ name: fn.functionName, count });
    }
  }
  return { functions, calls, files };
}

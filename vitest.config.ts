import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './test/support/slowest-first-sequencer.js';

/**
 * Whether this run names test/faults (`vitest run test/faults`, as npm test and test:faults do): its
 * trials load the machine on purpose and check what the clients went through meanwhile, so another
 * file beside them would change what they measure. An `--exclude` of it does not count.
 */
const faultRun = process.argv.some((arg, i) => arg.startsWith('test/faults') && !process.argv[i - 1]?.startsWith('--exclude'));

export default defineConfig({
  // Vite 8 compiles TypeScript with Oxc; legacy decorators with emitted metadata are what Nest's
  // dependency injection reads (design:paramtypes).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.test.ts'],
    // The packaging apps' own specs run inside those apps, against the installed tarball.
    exclude: [...configDefaults.exclude, 'test/packaging/**'],
    pool: 'forks',
    // Two files at a time on 2 cores, where Vitest's default is one (cores - 1): most of a file's
    // time is spent waiting (sessions, servers starting, timeouts), not computing. Longest files
    // first, so that neither worker ends the run alone. The fault suite stays one file at a time.
    maxWorkers: faultRun ? 1 : Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: SlowestFirstSequencer },
    globalSetup: ['./test/support/run-temp-dir.ts'],
    testTimeout: 60_000,
    // Set-up bounds, not measurements: starting JVMs, compiling with tsc and making TLS keys in
    // beforeAll took over 60 s on 2 cores at a load average of 20.
    hookTimeout: 180_000,
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});

import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // Vite 8 compiles TypeScript with Oxc; legacy decorators with emitted metadata are what Nest's
  // dependency injection reads (design:paramtypes).
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  test: {
    include: ['test/**/*.test.ts'],
    // The packaging apps' own specs run inside those apps, against the installed tarball.
    exclude: [...configDefaults.exclude, 'test/packaging/**'],
    pool: 'forks',
    globalSetup: ['./test/support/run-temp-dir.ts'],
    testTimeout: 60_000,
    // Set-up bounds, not measurements: starting JVMs, compiling with tsc and making TLS keys in
    // beforeAll took over 60 s on 2 cores at a load average of 20.
    hookTimeout: 180_000,
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Vite compiles TypeScript with Oxc; Nest's dependency injection reads the constructor types from
  // the metadata of legacy decorators (design:paramtypes), which Oxc emits only when asked.
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } },
  // test/counter.spec.ts is for node --test (npm test).
  test: { include: ['test/**/*.test.ts'] },
});

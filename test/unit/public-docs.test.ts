import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildConfig,
  emitDeclarations,
  findUndocumented,
  markedSections,
  type OptionType,
  readOptionTypes,
  REGENERATE,
  renderTables,
  ROOT,
  staleDocs,
} from '../../scripts/options-table.mjs';

/**
 * The JSDoc that users read is the one in the published .d.ts files, and the option tables of the
 * docs are rendered from it. scripts/options-table.mjs emits the declarations of tsconfig.build.json
 * in memory (what `npm run build` writes to dist/, never a stale copy of it) and reads the public
 * entries with the compiler: every exported `...Options` type must be documented, and each of its
 * properties too, with an @default when optional and its unit when it is a duration; and every
 * table between `<!-- options:<Type> -->` and `<!-- /options -->` must be what it renders now.
 */

/** Where each generated table must be. */
const TABLES: Record<string, readonly string[]> = {
  'docs/reference.md': ['ZkLockModuleOptions', 'AcquireOptions', 'DistributedLockOptions'],
  'docs/guide.md': ['CohortOptions'],
  'docs/operations.md': ['ZkLockHealthOptions', 'LockMetricsOptions', 'ZkLockViewOptions'],
  'docs/testing.md': ['ZkTestServerOptions'],
};

describe('the published types', () => {
  let config: ts.ParsedCommandLine;
  let declarations: Map<string, string>;
  let types: OptionType[];
  beforeAll(() => {
    config = buildConfig();
    declarations = emitDeclarations(config);
    types = readOptionTypes(config, declarations);
  });

  it('keep their comments (removeComments is off in the build)', () => {
    expect(config.options.removeComments ?? false).toBe(false);
    const index = [...declarations].find(([name]) => name.endsWith('/zk-lock-options.interface.d.ts'));
    expect(index?.[1]).toContain('@default');
  });

  it('document every public option: the type, each property, @default when optional, ms for durations', () => {
    const checked = types.map((type) => type.name);
    // The options the docs and the issue name must be among those checked.
    for (const name of ['ZkLockModuleOptions', 'ZkConnectionOptions', 'AcquireOptions', 'DistributedLockOptions', 'CohortOptions', 'ZkTestServerOptions', 'ZkLockTestingModuleOptions', 'ZkLockHealthOptions', 'LockMetricsOptions', 'ZkLockViewOptions']) {
      expect(checked).toContain(name);
    }
    expect(findUndocumented(types)).toEqual([]);
  });

  it('are what the option tables of the docs say: each table is rendered from the JSDoc', () => {
    for (const [file, expected] of Object.entries(TABLES)) {
      const marked = markedSections(readFileSync(join(ROOT, file), 'utf8')).map((section) => section.type);
      expect(marked, `${file} has a table for each of these types`).toEqual(expect.arrayContaining([...expected]));
    }
    const stale = staleDocs(renderTables(types)).map(({ file, types: differing }) => `${file}: ${differing.join(', ')}`);
    expect(stale, `These option tables differ from the JSDoc in lib/ (the tables are generated: run ${REGENERATE})`).toEqual([]);
  });
});

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, emitDeclarations, ROOT } from '../../scripts/options-table.mjs';
import { API_ENTRIES, runApiReports } from '../../scripts/api-report.mjs';
import { linkEntryTypes } from '../../scripts/entry-type-imports.mjs';

/**
 * `npm run api:check` (scripts/api-report.mjs, in `npm test`) compares the public API of each entry
 * point, as API Extractor reads it from the emitted .d.ts, with its committed report in api/. These
 * tests run the same check on declarations emitted in memory from lib/ (never a stale dist/), so a
 * change to the surface fails here too until `npm run api:update` rewrites the reports.
 */
describe('the API report check', () => {
  let work: string;
  let dist: string;
  beforeAll(() => {
    const config = buildConfig();
    const outDir = config.options.outDir as string;
    // Inside the repository, so that the declarations' imports (@nestjs/common, rxjs) resolve.
    mkdirSync(join(ROOT, 'build'), { recursive: true });
    work = mkdtempSync(join(ROOT, 'build', 'api-report-test-'));
    dist = join(work, 'dist');
    for (const [name, text] of emitDeclarations(config)) {
      const target = join(dist, relative(outDir, name));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    linkEntryTypes(dist); // what npm run build does after tsc (scripts/write-esm-entries.mjs)
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('passes when the public API is what api/*.api.md says (the committed reports are current)', () => {
    const changed = runApiReports({ dist, log: () => undefined });
    expect(changed.map(({ entry, diff }) => `${entry}:\n${diff}`), 'run npm run build && npm run api:update, and commit api/').toEqual([]);
  });

  it('fails on one export added to an entry point, and shows it in the diff', () => {
    const index = join(dist, 'index.d.ts');
    const original = readFileSync(index, 'utf8');
    writeFileSync(index, `${original}\nexport declare const ADDED_BY_THE_API_REPORT_TEST: number;\n`);
    try {
      const changed = runApiReports({ dist, log: () => undefined });
      expect(changed.map(({ entry }) => entry)).toEqual([API_ENTRIES[0]!.report]);
      expect(changed[0]!.diff).toContain('+ export const ADDED_BY_THE_API_REPORT_TEST: number;');
    } finally {
      writeFileSync(index, original);
    }
  });

  it('fails on an option removed from a subpath entry', () => {
    const health = join(dist, 'health', 'zk-lock.health.d.ts');
    const original = readFileSync(health, 'utf8');
    const edited = original.replace(/\n\s*downWhenSuspended\?: boolean;/, '');
    expect(edited).not.toBe(original);
    writeFileSync(health, edited);
    try {
      const changed = runApiReports({ dist, log: () => undefined });
      expect(changed.map(({ entry }) => entry)).toEqual(['nestjs-zk-lock-health']);
      expect(changed[0]!.diff).toMatch(/^- +downWhenSuspended\?: boolean;$/m);
    } finally {
      writeFileSync(health, original);
    }
  });

  it('has no ae-forgotten-export: every type an entry names is exported by it, or imported from the main entry', () => {
    for (const { report } of API_ENTRIES) {
      const text = readFileSync(join(ROOT, 'api', `${report}.api.md`), 'utf8');
      expect(text.match(/^.*ae-forgotten-export.*$/gm) ?? [], report).toEqual([]);
    }
  });

  it('takes the main entry\'s types from it in the subpath entries (without the link, the health entry names LockService it does not export)', () => {
    const health = join(dist, 'health', 'zk-lock.health.d.ts');
    const original = readFileSync(health, 'utf8');
    expect(original).toContain("import { LockService } from 'nestjs-zk-lock';");
    writeFileSync(health, original.replace("import { LockService } from 'nestjs-zk-lock';", "import { LockService } from '../service/lock.service.js';"));
    try {
      const changed = runApiReports({ dist, log: () => undefined });
      expect(changed.map(({ entry }) => entry)).toEqual(['nestjs-zk-lock-health']);
      expect(changed[0]!.diff).toContain('(ae-forgotten-export) The symbol "LockService"');
    } finally {
      writeFileSync(health, original);
    }
  });
});

// The public API as a contract: one API Extractor report per entry point, committed in api/.
//
// usage: node scripts/api-report.mjs --check   (npm run api:check) exits 1 when the public API of any
//                                               entry differs from its committed report, printing the diff
//        node scripts/api-report.mjs --update  (npm run api:update) rewrites the reports
//        either with --dist <dir> --reports <dir> reads other .d.ts and reports (the test of the check)
//
// Both read the .d.ts files of `npm run build` (dist/): build first. The shared settings are in
// api-extractor.json; each entry gets its own mainEntryPointFilePath and report name here.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
/** Each exported path of package.json, by its report name. */
export const API_ENTRIES = [
  { report: 'nestjs-zk-lock', dts: 'index.d.ts' },
  { report: 'nestjs-zk-lock-testing', dts: 'testing/index.d.ts' },
  { report: 'nestjs-zk-lock-health', dts: 'health/index.d.ts' },
  { report: 'nestjs-zk-lock-metrics', dts: 'metrics/index.d.ts' },
  { report: 'nestjs-zk-lock-live-view', dts: 'live-view/index.d.ts' },
];

function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] ? resolve(args[at + 1]) : fallback;
}

/**
 * Runs API Extractor on every entry. With `update`, the reports in `reports` are rewritten; else
 * each is compared with a fresh one and the differing entries are returned (with their diff).
 */
export function runApiReports({ update = false, dist = join(ROOT, 'dist'), reports = join(ROOT, 'api'), log = console.log } = {}) {
  const template = ExtractorConfig.loadFile(join(ROOT, 'api-extractor.json'));
  const temp = mkdtempSync(join(tmpdir(), 'api-report-'));
  const changed = [];
  try {
    for (const entry of API_ENTRIES) {
      const mainEntry = join(dist, entry.dts);
      if (!existsSync(mainEntry)) throw new Error(`${mainEntry} is missing: run npm run build first`);
      const configObject = {
        ...template,
        projectFolder: ROOT,
        mainEntryPointFilePath: mainEntry,
        compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.build.json') },
        apiReport: { ...template.apiReport, enabled: true, reportFileName: entry.report, reportFolder: temp, reportTempFolder: temp },
      };
      const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: join(ROOT, 'api-extractor.json'), packageJsonFullPath: join(ROOT, 'package.json') });
      // Always into the temp folder; the comparison and the copy are ours, so that the file
      // locations API Extractor writes beside a warning read `dist/...` wherever dist/ is.
      const result = Extractor.invoke(config, { localBuild: true, showVerboseMessages: false, messageCallback: quiet });
      if (!result.succeeded) throw new Error(`API Extractor failed on ${entry.dts} (${result.errorCount} errors): see above`);
      const fresh = readFileSync(join(temp, `${entry.report}.api.md`), 'utf8').replaceAll(`${relative(ROOT, dist)}/`, 'dist/');
      const committed = join(reports, `${entry.report}.api.md`);
      const current = existsSync(committed) ? readFileSync(committed, 'utf8') : '';
      if (update) {
        if (fresh !== current) writeFileSync(committed, fresh);
        log(`${entry.report}: ${fresh === current ? 'unchanged' : 'updated'} (${relative(ROOT, committed)})`);
      } else if (fresh !== current) changed.push({ entry: entry.report, diff: lineDiff(current, fresh) });
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return changed;
}

/** API Extractor's own console lines about the report are replaced by ours (the diff). */
function quiet(message) {
  if (String(message.messageId).startsWith('console-api-report')) message.handled = true;
  if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
}

/** The lines only in `before` (-) and only in `after` (+), in order: enough to review a surface change. */
export function lineDiff(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  // Longest common subsequence, by lines: reports are a few hundred lines.
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i][j + 1] >= lcs[i + 1][j])) out.push(`+ ${b[j++]}`);
    else out.push(`- ${a[i++]}`);
  }
  return out.join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const update = args.includes('--update');
  if (!update && !args.includes('--check')) {
    console.error('usage: node scripts/api-report.mjs --check | --update [--dist <dir>] [--reports <dir>]');
    process.exit(2);
  }
  const changed = runApiReports({ update, dist: option(args, '--dist', undefined), reports: option(args, '--reports', undefined) });
  if (changed.length > 0) {
    for (const { entry, diff } of changed) console.error(`\n${entry}: the public API differs from api/${entry}.api.md:\n${diff}`);
    console.error(`\napi:check FAILED: the public API changed (${changed.map((c) => c.entry).join(', ')}). If that is intended, run npm run api:update and commit api/*.api.md with the change.`);
    process.exitCode = 1;
  } else if (!update) console.log(`api:check: the public API of ${API_ENTRIES.length} entry points matches api/*.api.md`);
}

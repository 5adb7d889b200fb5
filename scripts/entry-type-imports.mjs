// The subpath entries (testing, health, metrics, live-view) take the main entry's types from the
// main entry: in their published .d.ts files, an import of a name the main entry exports, from the
// module the main entry exports it from, is rewritten to import it from 'nestjs-zk-lock'. A user's
// compiler then sees one LockService (and one ZkLockModuleOptions, one LockEvent...) whichever
// entry names it, and each entry's API report lists it as an import from the main entry instead of
// a name the entry forgot to export. Only declarations change: the JavaScript keeps its relative
// requires, which load the same modules as the main entry does.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const PACKAGE = 'nestjs-zk-lock';
const SUBPATH_DIRS = ['testing', 'health', 'metrics', 'live-view'];
/** `import [type] { a, type b as c } from '<spec>';` on one line, as tsc writes it in declarations. */
const NAMED_IMPORT = /^import (type )?\{([^}]*)\} from '([^']+)';$/gm;

/**
 * Every name the main entry exports, with the module (path under outDir, without extension) it is
 * exported from. lib/index.ts holds only re-exports, so its declaration file says it all.
 */
function mainEntryNames(outDir) {
  const names = new Map();
  const text = readFileSync(join(outDir, 'index.d.ts'), 'utf8');
  for (const [, list, spec] of text.matchAll(/^export (?:type )?\{([^}]*)\} from '([^']+)';$/gm)) {
    const module = resolve(outDir, spec).replace(/\.js$/, '');
    for (const item of list.split(',')) {
      const name = item.trim().replace(/^type /, '');
      if (!name) continue;
      if (name.includes(' as ')) throw new Error(`${outDir}/index.d.ts renames ${name}: entry-type-imports.mjs does not handle renamed exports`);
      names.set(name, module);
    }
  }
  if (names.size === 0) throw new Error(`${outDir}/index.d.ts exports nothing: run tsc -p tsconfig.build.json first`);
  return names;
}

function* declarationFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* declarationFiles(path);
    else if (entry.name.endsWith('.d.ts')) yield path;
  }
}

/** Rewrites one declaration file's imports of main-entry names; returns how many names moved. */
function linkFile(file, mainNames) {
  let moved = 0;
  const text = readFileSync(file, 'utf8');
  const linked = text.replace(NAMED_IMPORT, (line, typeOnly, list, spec) => {
    if (!spec.startsWith('.')) return line;
    const module = resolve(dirname(file), spec).replace(/\.js$/, '');
    const fromMain = [];
    const kept = [];
    for (const raw of list.split(',')) {
      const item = raw.trim();
      if (!item) continue;
      const name = item.replace(/^type /, '').split(' as ')[0].trim();
      (mainNames.get(name) === module ? fromMain : kept).push(item);
    }
    if (fromMain.length === 0) return line;
    moved += fromMain.length;
    const keyword = typeOnly ?? '';
    const lines = [`import ${keyword}{ ${fromMain.join(', ')} } from '${PACKAGE}';`];
    if (kept.length > 0) lines.push(`import ${keyword}{ ${kept.join(', ')} } from '${spec}';`);
    return lines.join('\n');
  });
  if (linked !== text) writeFileSync(file, linked);
  return moved;
}

/** Links every subpath entry's declarations in `outDir` to the main entry; returns a line per entry. */
export function linkEntryTypes(outDir) {
  const mainNames = mainEntryNames(outDir);
  const report = [];
  for (const sub of SUBPATH_DIRS) {
    let moved = 0;
    for (const file of declarationFiles(join(outDir, sub))) moved += linkFile(file, mainNames);
    report.push(`${relative(outDir, join(outDir, sub))}/*.d.ts: ${moved} imports of main-entry names from '${PACKAGE}'`);
  }
  return report;
}

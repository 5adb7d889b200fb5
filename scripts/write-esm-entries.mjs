// Completes a build of nestjs-zk-lock in <outDir> (what `tsc -p tsconfig.build.json` wrote there):
// marks the directory CommonJS, writes the ES module entries beside the CommonJS ones, and makes the
// subpath entries' declarations take the main entry's types from it (entry-type-imports.mjs).
//
// The package has one implementation, the CommonJS build. Each ES module entry (index.mjs,
// testing/index.mjs, health/index.mjs) only re-exports its CommonJS entry, so `import` and `require`
// reach the same module instance: one LockService registry, one lock-context store, one set of error
// classes. CommonJS is the format every consumer can load (Node's `import` of CommonJS, Jest's own
// loader, ts-jest, @swc/jest); the reverse, `require()` of an ES module, needs Node 20.19+ and is not
// supported by Jest's loader.
//
// The names are read from the CommonJS entry itself (not from Node's static guess at a CommonJS
// module's exports), so an entry cannot silently lose one; the .d.mts re-exports the same
// declarations, so TypeScript sees one class per export under either condition.
//
// usage: node scripts/write-esm-entries.mjs <outDir>
// (outDir outside this repository: set NODE_PATH to its node_modules, as scripts/test-packaging.sh does)
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { linkEntryTypes } from './entry-type-imports.mjs';

const ENTRIES = ['index', 'testing/index', 'health/index', 'metrics/index', 'live-view/index'];

const [outArg] = process.argv.slice(2);
if (!outArg) throw new Error('usage: node scripts/write-esm-entries.mjs <outDir> (the outDir of tsc -p tsconfig.build.json)');
const outDir = resolve(outArg);

// The repository is "type": "module"; the build beneath outDir is CommonJS.
writeFileSync(join(outDir, 'package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');

const requireFromOut = createRequire(join(outDir, 'package.json'));
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
for (const entry of ENTRIES) {
  const cjsFile = join(outDir, `${entry}.js`);
  const names = Object.keys(requireFromOut(cjsFile)).filter((name) => name !== '__esModule').sort();
  const odd = names.filter((name) => !IDENTIFIER.test(name));
  if (odd.length > 0) throw new Error(`${cjsFile} exports names that are not identifiers: ${odd.join(', ')}`);
  if (names.length === 0) throw new Error(`${cjsFile} exports nothing: did tsc -p tsconfig.build.json write to ${outDir}?`);
  const base = `./${entry.split('/').pop()}.js`;
  const header = `// The ES module entry: the CommonJS build re-exported, so that import and require share one instance.\n`;
  mkdirSync(dirname(cjsFile), { recursive: true });
  writeFileSync(
    join(outDir, `${entry}.mjs`),
    `${header}import cjs from '${base}';\n\nexport const {\n${names.map((name) => `  ${name},`).join('\n')}\n} = cjs;\n`,
  );
  writeFileSync(join(outDir, `${entry}.d.mts`), `${header}export * from '${base}';\n`);
  console.log(`${entry}.mjs: ${names.length} exports`);
}
for (const line of linkEntryTypes(outDir)) console.log(line);

// The option tables of the docs, generated from the JSDoc users read: the JSDoc in the published .d.ts
// files. It emits the declarations of tsconfig.build.json in memory (what `npm run build` writes to
// dist/, never a stale copy of it), reads the public entries with the compiler, and renders every
// exported `...Options` type as `| option | unit | default | meaning |`.
//
// In the docs, a table sits between `<!-- options:<TypeName> -->` and `<!-- /options -->`;
// everything between the two markers is generated.
//
// usage: node scripts/options-table.mjs --write   (npm run docs:options) rewrites every marked table
//        node scripts/options-table.mjs --check   exits 1 when a marked table differs from the JSDoc
//        node scripts/options-table.mjs <TypeName> prints one table
//
// test/unit/public-docs.test.ts imports this file: it holds every option to its JSDoc, units and
// defaults, and every marked table to what this script renders.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The public entries, as the build emits them. */
export const ENTRIES = ['index.d.ts', 'testing/index.d.ts', 'health/index.d.ts', 'metrics/index.d.ts', 'live-view/index.d.ts'];
/** The files that may hold marked tables. */
export const DOC_FILES = ['README.md', 'CONTRIBUTING.md', ...listDocs()];
export const REGENERATE = 'npm run docs:options';

const BEGIN = /<!-- options:([A-Za-z0-9_]+) -->\n/g;
const END = '<!-- /options -->';

function listDocs() {
  try {
    return readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => `docs/${name}`);
  } catch {
    return [];
  }
}

/** tsconfig.build.json, parsed. */
export function buildConfig() {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.build.json'), {}, host);
  if (!config) throw new Error('tsconfig.build.json could not be read');
  return config;
}

/** The declarations `npm run build` would write, by file name, emitted in memory. */
export function emitDeclarations(config) {
  const options = { ...config.options, noEmit: false, declaration: true, emitDeclarationOnly: true, sourceMap: false, declarationMap: false };
  const program = ts.createProgram({ rootNames: config.fileNames, options });
  const files = new Map();
  const result = program.emit(undefined, (name, text) => files.set(name, text), undefined, true);
  if (result.emitSkipped) throw new Error('declaration emit failed: run npm run typecheck');
  return files;
}

const flatten = (text) => text.replace(/\s*\n\s*/g, ' ').trim();
/** Tags that are tags; any other `@word` in a comment is text the compiler took for a tag. */
const JSDOC_TAGS = new Set(['default', 'defaultValue', 'deprecated', 'example', 'see', 'since', 'throws', 'remarks', 'param', 'returns', 'internal']);

/**
 * Every exported `...Options` type of the public entries, with its properties, inherited ones
 * included (in the order the compiler gives them), as the declarations document them.
 */
export function readOptionTypes(config, declarations) {
  const outDir = config.options.outDir;
  const host = ts.createCompilerHost(config.options);
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    declarations.has(name) ? ts.createSourceFile(name, declarations.get(name), language, true) : readSource(name, language, ...rest);
  host.fileExists = (name) => declarations.has(name) || ts.sys.fileExists(name);
  host.readFile = (name) => declarations.get(name) ?? ts.sys.readFile(name);

  const entries = ENTRIES.map((entry) => join(outDir, entry));
  const program = ts.createProgram({ rootNames: entries, options: { ...config.options, noEmit: true }, host });
  const checker = program.getTypeChecker();
  const ours = (declaration) => declaration && declarations.has(declaration.getSourceFile().fileName);

  const readProperty = (property, depth) => {
    const declaration = property.declarations?.[0];
    const allTags = property.getJsDocTags(checker).map((tag) => ({ name: tag.name, text: flatten(ts.displayPartsToString(tag.text)) }));
    // The compiler reads any `@word` after a space as a tag (`its @DistributedLock in time`): such a
    // word is part of the text, as an editor's hover shows it.
    const tags = allTags.filter((tag) => JSDOC_TAGS.has(tag.name));
    const strayText = allTags.filter((tag) => !JSDOC_TAGS.has(tag.name)).map((tag) => `@${tag.name} ${tag.text}`.trim());
    const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
    const declaredOptional = Boolean(declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.questionToken);
    const read = {
      name: property.name,
      // Inherited from outside this package (e.g. lib.d.ts): not ours to document.
      ours: ours(declaration),
      optional,
      declaredOptional,
      doc: [flatten(ts.displayPartsToString(property.getDocumentationComment(checker))), ...strayText].filter(Boolean).join(' '),
      strayTags: strayText,
      tags,
      default: tags.find((tag) => tag.name === 'default')?.text,
      children: [],
    };
    // One level down into an options object of this package (`cohort`, `tls`).
    if (depth === 0 && declaration && read.ours) {
      const type = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(property, declaration));
      const objects = (type.isUnion() ? type.types : [type]).filter((t) => t.flags & ts.TypeFlags.Object);
      const named = objects.length === 1 ? objects[0].aliasSymbol ?? objects[0].getSymbol() : undefined;
      if (named && named.name.endsWith('Options') && ours(named.declarations?.[0])) {
        read.children = checker.getPropertiesOfType(objects[0]).map((child) => readProperty(child, depth + 1));
      }
    }
    return read;
  };

  const types = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${entry} was not emitted`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      if (!exported.name.endsWith('Options')) continue;
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      // Inherited properties first (what the `extends` clause brings), then the type's own.
      const own = new Set(symbol.declarations ?? []);
      const properties = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol));
      const isOwn = (property) => own.has(property.declarations?.[0]?.parent);
      types.push({
        entry: entry.slice(outDir.length + 1),
        name: exported.name,
        doc: flatten(ts.displayPartsToString(symbol.getDocumentationComment(checker))),
        properties: [...properties.filter((p) => !isOwn(p)), ...properties.filter(isOwn)].map((property) => readProperty(property, 0)),
      });
    }
  }
  return types;
}

/** What a docs reader and the published types both need: JSDoc on every option, @default when optional, ms on durations. */
export function findUndocumented(types) {
  const findings = [];
  for (const type of types) {
    const at = `${type.entry} ${type.name}`;
    if (!type.doc) findings.push(`${at}: the type has no JSDoc`);
    for (const property of type.properties) {
      if (!property.ours) continue;
      if (!property.doc) findings.push(`${at}: ${property.name}: no JSDoc`);
      if (property.declaredOptional && property.default === undefined) findings.push(`${at}: ${property.name}: optional, but no @default`);
      const text = [property.doc, ...property.tags.map((tag) => tag.text)].join(' ');
      if (/Ms$/.test(property.name) && !/\bms\b|millisecond/i.test(text)) findings.push(`${at}: ${property.name}: a duration whose JSDoc names no unit (ms)`);
    }
  }
  return findings;
}

// A default that starts with a value (`'/locks'`, `15000`, `{}`, `false`, `DEFAULT_SECONDS_BUCKETS`,
// `process.env.ZK_JAR`, `os.tmpdir()`) shows that value as code; the words after it stay words.
const VALUE = /^(?:'[^']*'|"[^"]*"|-?\d[\d_.]*|\{[^}]*\}|\[[^\]]*\]|true|false|null|undefined|[A-Z][A-Z0-9_]*[A-Z0-9]|[\w.]+\(\)|process\.env\.\w+)(?=$|[\s,(;])/;

function renderDefault(property) {
  if (property.default === undefined) return property.declaredOptional ? '' : 'required';
  const value = VALUE.exec(property.default);
  return value ? `\`${value[0]}\`${property.default.slice(value[0].length)}` : property.default;
}

/** Keeps a cell on its one line and in its column. */
const cell = (text) => text.replace(/\|/g, '\\|');

function rows(property, prefix = '') {
  const name = prefix + property.name;
  const row = `| \`${name}\` | ${/Ms$/.test(property.name) ? 'ms' : ''} | ${cell(renderDefault(property))} | ${cell(property.doc)} |`;
  return [row, ...property.children.map((child) => rows(child, `${name}.`)).flat()];
}

/** The table of one options type. */
export function renderTable(type) {
  return ['| option | unit | default | meaning |', '| --- | --- | --- | --- |', ...type.properties.map((property) => rows(property)).flat()].join('\n');
}

/** Each marked section of a document: the type it names, where its body starts and ends. */
export function markedSections(text) {
  const sections = [];
  for (const match of text.matchAll(BEGIN)) {
    const start = match.index + match[0].length;
    const end = text.indexOf(END, start);
    if (end < 0) throw new Error(`<!-- options:${match[1]} --> has no ${END} after it`);
    sections.push({ type: match[1], start, end });
  }
  return sections;
}

/** What goes between the markers: the table, with blank lines around it so that every Markdown renderer sees a table. */
const sectionBody = (table) => `\n${table}\n\n`;

/** The document with every marked table rendered afresh. */
export function renderDocument(text, tables) {
  let next = '';
  let at = 0;
  for (const section of markedSections(text)) {
    const table = tables.get(section.type);
    if (table === undefined) throw new Error(`<!-- options:${section.type} -->: no exported options type of that name (known: ${[...tables.keys()].join(', ')})`);
    next += text.slice(at, section.start) + sectionBody(table);
    at = section.end;
  }
  return next + text.slice(at);
}

/** Every exported options type's table, by type name. */
export function renderTables(types) {
  return new Map(types.map((type) => [type.name, renderTable(type)]));
}

/** The docs whose marked tables differ from the JSDoc: `{ file, current, expected, types }`. */
export function staleDocs(tables, files = DOC_FILES) {
  const stale = [];
  for (const file of files) {
    let current;
    try {
      current = readFileSync(join(ROOT, file), 'utf8');
    } catch {
      continue;
    }
    const expected = renderDocument(current, tables);
    if (expected !== current) {
      const types = markedSections(current)
        .filter((section) => current.slice(section.start, section.end) !== sectionBody(tables.get(section.type)))
        .map((section) => section.type);
      stale.push({ file, current, expected, types });
    }
  }
  return stale;
}

function main(argv) {
  const config = buildConfig();
  const tables = renderTables(readOptionTypes(config, emitDeclarations(config)));
  const [arg] = argv;
  if (arg === '--write' || arg === '--check') {
    const stale = staleDocs(tables);
    for (const { file, expected, types } of stale) {
      if (arg === '--write') writeFileSync(join(ROOT, file), expected);
      console.log(`${arg === '--write' ? 'wrote' : 'stale'} ${relative(ROOT, join(ROOT, file))}: ${types.join(', ')}`);
    }
    if (stale.length === 0) console.log('every marked options table matches the JSDoc');
    return arg === '--check' && stale.length > 0 ? 1 : 0;
  }
  if (arg && tables.has(arg)) {
    console.log(tables.get(arg));
    return 0;
  }
  console.error(`usage: node scripts/options-table.mjs --write | --check | <TypeName>\ntypes: ${[...tables.keys()].join(', ')}`);
  return 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The JSDoc that users read is the one in the published .d.ts files. So this emits the declarations
 * of tsconfig.build.json in memory (what `npm run build` writes to dist/, never a stale copy of it)
 * and reads the public entries with the compiler: every exported `...Options` type must be
 * documented, and each of its properties too, with an @default when optional and its unit when it
 * is a duration.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRIES = ['index.d.ts', 'testing/index.d.ts', 'health/index.d.ts', 'metrics/index.d.ts', 'live-view/index.d.ts'];

interface Finding {
  entry: string;
  type: string;
  problem: string;
}

function buildConfig(): ts.ParsedCommandLine {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, host);
  if (!config) throw new Error('tsconfig.build.json could not be read');
  return config;
}

function emitDeclarations(config: ts.ParsedCommandLine): Map<string, string> {
  const options = { ...config.options, noEmit: false, declaration: true, emitDeclarationOnly: true, sourceMap: false, declarationMap: false };
  const program = ts.createProgram({ rootNames: config.fileNames, options });
  const files = new Map<string, string>();
  const result = program.emit(undefined, (name, text) => files.set(name, text), undefined, true);
  if (result.emitSkipped) throw new Error('declaration emit failed: run npm run typecheck');
  return files;
}

function findUndocumented(config: ts.ParsedCommandLine, declarations: Map<string, string>): { findings: Finding[]; checked: string[] } {
  const outDir = config.options.outDir!;
  const host = ts.createCompilerHost(config.options);
  const readSource = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    declarations.has(name) ? ts.createSourceFile(name, declarations.get(name)!, language, true) : readSource(name, language, ...rest);
  host.fileExists = (name) => declarations.has(name) || ts.sys.fileExists(name);
  host.readFile = (name) => declarations.get(name) ?? ts.sys.readFile(name);

  const entries = ENTRIES.map((entry) => join(outDir, entry));
  const program = ts.createProgram({ rootNames: entries, options: { ...config.options, noEmit: true }, host });
  const checker = program.getTypeChecker();
  const findings: Finding[] = [];
  const checked: string[] = [];
  for (const entry of entries) {
    const source = program.getSourceFile(entry);
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${entry} was not emitted`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      if (!exported.name.endsWith('Options')) continue;
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const at = { entry: entry.slice(outDir.length + 1), type: exported.name };
      checked.push(exported.name);
      if (!ts.displayPartsToString(symbol.getDocumentationComment(checker))) findings.push({ ...at, problem: 'the type has no JSDoc' });
      for (const property of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
        const declaration = property.declarations?.[0];
        // Inherited from outside this package (e.g. lib.d.ts): not ours to document.
        if (!declaration || !declarations.has(declaration.getSourceFile().fileName)) continue;
        const doc = ts.displayPartsToString(property.getDocumentationComment(checker));
        const tags = property.getJsDocTags(checker);
        const where = { ...at, problem: '' };
        if (!doc) findings.push({ ...where, problem: `${property.name}: no JSDoc` });
        const optional = (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration)) && declaration.questionToken;
        if (optional && !tags.some((tag) => tag.name === 'default')) findings.push({ ...where, problem: `${property.name}: optional, but no @default` });
        const text = [doc, ...tags.map((tag) => ts.displayPartsToString(tag.text))].join(' ');
        if (/Ms$/.test(property.name) && !/\bms\b|millisecond/i.test(text)) findings.push({ ...where, problem: `${property.name}: a duration whose JSDoc names no unit (ms)` });
      }
    }
  }
  return { findings, checked };
}

describe('the published types', () => {
  let config: ts.ParsedCommandLine;
  let declarations: Map<string, string>;
  beforeAll(() => {
    config = buildConfig();
    declarations = emitDeclarations(config);
  });

  it('keep their comments (removeComments is off in the build)', () => {
    expect(config.options.removeComments ?? false).toBe(false);
    const index = [...declarations].find(([name]) => name.endsWith('/zk-lock-options.interface.d.ts'));
    expect(index?.[1]).toContain('@default');
  });

  it('document every public option: the type, each property, @default when optional, ms for durations', () => {
    const { findings, checked } = findUndocumented(config, declarations);
    // The options the README and the issue name must be among those checked.
    for (const name of ['ZkLockModuleOptions', 'ZkConnectionOptions', 'AcquireOptions', 'DistributedLockOptions', 'CohortOptions', 'ZkTestServerOptions', 'ZkLockTestingModuleOptions', 'ZkLockHealthOptions', 'LockMetricsOptions', 'ZkLockViewOptions']) {
      expect(checked).toContain(name);
    }
    expect(findings.map((f) => `${f.entry} ${f.type}: ${f.problem}`)).toEqual([]);
  });
});

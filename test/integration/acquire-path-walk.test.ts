/**
 * The walk of one acquire in docs/internals.md is what one acquire runs: the measure
 * (`scripts/acquire-path.mjs --json`, V8's precise coverage of one warm, uncontended `withLock` on the
 * built package, against its own real ZooKeeper) is compared with the two marked blocks. Every step
 * drawn ran in its file (but the contended ones), every other call listed ran, and nothing ran that neither block names, so a
 * reader who follows the drawing meets every function on the way and no other.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { acquirePathCalls, acquirePathSteps, type PathStep } from '../support/acquire-path-doc.js';

const root = process.cwd();
const DIST_ENTRY = join(root, 'dist/index.js');

/** One measured acquire: each file of dist/ that ran, with its functions (name as the measure gives it). */
interface MeasuredRun {
  readonly functions: number;
  readonly files: Record<string, { name: string; count: number }[]>;
}

/** The name the measure gives a step's function: a method's own name, a class's for its constructor. */
function measuredName(step: PathStep): string {
  const [owner, member] = step.name.includes('.') ? step.name.split('.') : [undefined, step.name];
  return member === 'constructor' ? owner! : member!;
}

/** What the drawing gets wrong about `run`: steps or calls that did not run, and functions it does not name. */
function walkProblems(steps: readonly PathStep[], calls: ReadonlyMap<string, string[]>, run: MeasuredRun): string[] {
  const ran = new Map<string, Set<string>>();
  for (const [file, fns] of Object.entries(run.files)) ran.set(`lib/${file.replace(/\.js$/, '.ts')}`, new Set(fns.map((fn) => fn.name)));
  const named = new Map<string, Set<string>>();
  const name = (file: string, fn: string): void => void (named.get(file) ?? named.set(file, new Set()).get(file)!).add(fn);
  const problems: string[] = [];
  for (const step of steps) {
    const fn = measuredName(step);
    name(step.file, fn);
    if (!step.contended && !ran.get(step.file)?.has(fn)) problems.push(`step ${step.name} (${step.file}) did not run`);
  }
  for (const [file, fns] of calls) {
    for (const fn of fns) {
      name(file, fn);
      if (!ran.get(file)?.has(fn)) problems.push(`call ${fn} (${file}) did not run`);
    }
  }
  for (const [file, fns] of ran) {
    for (const fn of fns) if (!named.get(file)?.has(fn)) problems.push(`${fn} (${file}) ran, but the drawing does not name it`);
  }
  return problems;
}

/** The newest modification time among the .ts files under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (entry.endsWith('.ts')) newest = Math.max(newest, statSync(join(dir, entry)).mtimeMs);
  }
  return newest;
}

describe('the acquire path drawn in docs/internals.md, against one measured acquire', () => {
  const markdown = readFileSync(join(root, 'docs/internals.md'), 'utf8');
  const steps = acquirePathSteps(markdown);
  const calls = acquirePathCalls(markdown);

  it('names every function one warm, uncontended withLock runs, and only those', { timeout: 120_000 }, async () => {
    if (!existsSync(DIST_ENTRY)) throw new Error(`${DIST_ENTRY} is missing: run \`npm run build\` (npm test does)`);
    if (statSync(DIST_ENTRY).mtimeMs < newestSource(join(root, 'lib'))) {
      // tsc rewrites every output, so the entry's time is the build's: a source edited since is not in it.
      throw new Error('dist/ is older than a file of lib/: run `npm run build` (npm test does) and run this test again');
    }
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'scripts/acquire-path.mjs'), '--runs', '3', '--json'], {
      cwd: root,
      timeout: 110_000,
    });
    const runs = JSON.parse(stdout.trim().split('\n').at(-1)!) as MeasuredRun[];
    // A run can also meet the session's lease renewal; the leanest of three is the acquire alone.
    const leanest = runs.reduce((a, b) => (b.functions < a.functions ? b : a));
    expect(walkProblems(steps, calls, leanest)).toEqual([]);

    // Control: the comparison sees a function the drawing does not name, and a listed call that did not run.
    const [firstFile, firstFns] = Object.entries(leanest.files)[0]!;
    const extra: MeasuredRun = { ...leanest, files: { ...leanest.files, [firstFile]: [...firstFns, { name: 'notDrawn', count: 1 }] } };
    expect(walkProblems(steps, calls, extra)).toEqual([`notDrawn (lib/${firstFile.replace(/\.js$/, '.ts')}) ran, but the drawing does not name it`]);
    const withoutFirst: MeasuredRun = { ...leanest, files: { ...leanest.files, [firstFile]: firstFns.slice(1) } };
    expect(walkProblems(steps, calls, withoutFirst)).toHaveLength(1);
  });
});

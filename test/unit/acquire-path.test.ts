import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { acquirePathSteps, type PathStep } from '../support/acquire-path-doc.js';

/**
 * docs/internals.md draws the path of one acquire as lines of `Name` or `Class.method`, then the
 * file that defines it. This keeps the drawing true: every file exists, and defines what the line
 * names, so a rename or a move that forgets the docs fails here.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** What is wrong with one step, or undefined when its file defines it. */
function problemOf(step: PathStep, readSource: (file: string) => string | undefined): string | undefined {
  const source = readSource(step.file);
  if (source === undefined) return `${step.file} does not exist`;
  const [owner, member] = step.name.includes('.') ? step.name.split('.') : [undefined, step.name];
  if (owner !== undefined && !new RegExp(`\\bclass ${owner}\\b`).test(source)) return `${step.file} defines no class ${owner}`;
  const definition =
    owner === undefined
      ? new RegExp(`\\bfunction ${member}\\s*[(<]`)
      : new RegExp(`^\\s*(?:(?:private|protected|public|static|async|readonly)\\s+)*${member}\\s*[(<]`, 'm');
  if (!definition.test(source)) return `${step.file} defines no ${owner === undefined ? 'function' : 'method'} ${step.name}`;
  return undefined;
}

const readSource = (file: string): string | undefined => {
  const path = join(root, file);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
};

describe('the acquire path drawn in docs/internals.md', () => {
  const steps = acquirePathSteps(readFileSync(join(root, 'docs/internals.md'), 'utf8'));

  it('names only steps whose files define them', () => {
    expect(steps.length).toBeGreaterThan(10);
    expect(steps.map((step) => problemOf(step, readSource)).filter(Boolean)).toEqual([]);
  });

  it('names each step once', () => {
    const names = steps.map((step) => step.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('would notice a step that is not defined, a class that is not there, and a missing file (the check can fail)', () => {
    expect(problemOf({ name: 'QueueWaiter.noSuchStep', file: 'lib/queue/queue-waiter.ts', contended: false }, readSource)).toMatch(/no method/);
    expect(problemOf({ name: 'NoSuchClass.run', file: 'lib/queue/queue-waiter.ts', contended: false }, readSource)).toMatch(/no class/);
    expect(problemOf({ name: 'noSuchFunction', file: 'lib/queue/grant-check.ts', contended: false }, readSource)).toMatch(/no function/);
    expect(problemOf({ name: 'placeIn', file: 'lib/queue/no-such-file.ts', contended: true }, readSource)).toMatch(/does not exist/);
  });
});

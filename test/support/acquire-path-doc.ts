/**
 * docs/internals.md draws the path of one warm, uncontended `withLock` in two marked blocks: the
 * steps (`<!-- acquire-path -->`: `Name` or `Class.method`, then the file below lib/ that defines it) and the
 * other calls on the way (`<!-- acquire-path-calls -->`: a file, then the names the coverage measure
 * gives its functions, comma-separated). The unit test checks the steps against the sources, the
 * integration test both blocks against what one acquire runs.
 */

/** One step of the drawing. */
export interface PathStep {
  readonly name: string;
  readonly file: string;
  /** Its description starts with `contended:`: it runs only when others are in the queue. */
  readonly contended: boolean;
}

/** The text between `<!-- tag -->` and `<!-- /tag -->`, inside its code fence. */
function markedBlock(markdown: string, tag: string): string[] {
  const block = new RegExp(`<!-- ${tag} -->\\s*\`\`\`text\\n([\\s\\S]*?)\`\`\`\\s*<!-- /${tag} -->`).exec(markdown);
  if (!block) throw new Error(`docs/internals.md has no ${tag} block`);
  return block[1]!.split('\n').filter((line) => line.trim() !== '');
}

/** The steps of the acquire-path block. */
export function acquirePathSteps(markdown: string): PathStep[] {
  return markedBlock(markdown, 'acquire-path').map((line) => {
    const match = /^([A-Za-z]+(?:\.[A-Za-z]+)?)\s+(\S+\.ts)\s*(.*)$/.exec(line);
    if (!match) throw new Error(`not a step (name, then file): ${line}`);
    return { name: match[1]!, file: `lib/${match[2]!}`, contended: match[3]!.startsWith('contended:') };
  });
}

/** The acquire-path-calls block: each file's other functions on the path, by the names the measure gives them. */
export function acquirePathCalls(markdown: string): Map<string, string[]> {
  const calls = new Map<string, string[]>();
  for (const line of markedBlock(markdown, 'acquire-path-calls')) {
    const match = /^(\S+\.ts)\s+(.+)$/.exec(line);
    if (!match) throw new Error(`not a file and its calls: ${line}`);
    const file = `lib/${match[1]!}`;
    calls.set(file, [...(calls.get(file) ?? []), ...match[2]!.split(',').map((name) => name.trim())]);
  }
  return calls;
}

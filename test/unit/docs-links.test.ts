import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the docs resolves: the file exists, and a `#anchor` names a heading of it
 * (as GitHub makes heading ids). The README is read on npm too, which resolves its relative links
 * against the repository.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const FILES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docs];

/** The lines of a Markdown file outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's heading ids: the heading's text, lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2 ... */
function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const rendered = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** The relative link targets of a Markdown file (inline code and fenced blocks left out). */
function links(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
      targets.push(target);
    }
  }
  return targets;
}

function brokenLinks(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const broken: string[] = [];
  for (const target of links(text)) {
    const [path = '', anchor] = target.split('#');
    const resolved = path === '' ? join(root, file) : resolve(dirname(join(root, file)), decodeURIComponent(path));
    if (!existsSync(resolved)) {
      broken.push(`${file}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
      broken.push(`${file}: ${target}: an anchor in something that is not a Markdown file`);
      continue;
    }
    if (!headingIds(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${file}: ${target}: no heading #${anchor} in ${relative(root, resolved)}`);
    }
  }
  return broken;
}

describe('the docs', () => {
  it('make heading ids as GitHub does', () => {
    const ids = headingIds(
      '# Testing your code: `nestjs-zk-lock/testing`\n## Testing your app with Jest / Vitest\n### @DistributedLock\n```sh\n# not a heading\n```\n## Notes\n## Notes\n',
    );
    expect([...ids]).toEqual(['testing-your-code-nestjs-zk-locktesting', 'testing-your-app-with-jest--vitest', 'distributedlock', 'notes', 'notes-1']);
  });

  it('link only to files and headings that exist', () => {
    expect(FILES).toEqual(expect.arrayContaining(['docs/guide.md', 'docs/reference.md']));
    expect(FILES.flatMap(brokenLinks)).toEqual([]);
  });
});

import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes one section of docs/faults.md (the soak's, the partition trials'), between its own markers,
 * keeping the other sections as they are.
 */
export function writeReportSection(name: string, text: string): void {
  const file = new URL('../../../docs/faults.md', import.meta.url);
  const begin = `<!-- ${name}: begin -->`;
  const end = `<!-- ${name}: end -->`;
  const section = `${begin}\n${text.trim()}\n${end}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Fault suites\n';
  const from = current.indexOf(begin);
  const to = current.indexOf(end);
  const next = from >= 0 && to > from ? current.slice(0, from) + section + current.slice(to + end.length) : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, next);
}

/**
 * The ZooKeeper the runs used, as the reports name it: the version of the Debian package that owns
 * the server jar (`zookeeper` depends on `libzookeeper-java`, which holds the jar).
 */
export function zookeeperVersion(): string {
  for (const name of ['zookeeper', 'libzookeeper-java']) {
    try {
      return `${execSync(`dpkg-query -W -f='\${Version}' ${name}`, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()} (Debian's ${name})`;
    } catch {
      // not installed under this name: try the next
    }
  }
  return 'unknown';
}

import { readFile, rename, writeFile } from 'node:fs/promises';

let writes = 0;

/**
 * A counter that several processes share, kept in a file: a stand-in for a database row. Reading and
 * writing are separate awaits, so two unguarded increments can read the same value and one update
 * is lost.
 */
export class CounterStore {
  constructor(private readonly file: string) {}

  async reset(): Promise<void> {
    await this.replace({ value: 0, fencingToken: '' });
  }

  async read(): Promise<number> {
    return (JSON.parse(await readFile(this.file, 'utf8')) as { value: number }).value;
  }

  /** Writes the value; with a token, refuses a token lower than the last one it accepted. */
  async write(value: number, fencingToken = ''): Promise<void> {
    const current = JSON.parse(await readFile(this.file, 'utf8')) as { fencingToken: string };
    if (fencingToken && fencingToken < current.fencingToken) {
      throw new Error(`stale fencing token ${fencingToken} < ${current.fencingToken}: write refused`);
    }
    await this.replace({ value, fencingToken: fencingToken || current.fencingToken });
  }

  /** Write-then-rename, so a concurrent reader sees the old or the new content, never half of it. */
  private async replace(content: { value: number; fencingToken: string }): Promise<void> {
    const temporary = `${this.file}.${process.pid}.${++writes}`;
    await writeFile(temporary, JSON.stringify(content));
    await rename(temporary, this.file);
  }
}

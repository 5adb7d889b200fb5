import { readFile, rename, writeFile } from 'node:fs/promises';

interface CounterRow {
  value: number;
  /** The highest fencing token a write has carried; '' before any fenced write. */
  fencingToken: string;
}

let writes = 0;

/**
 * The counter several processes share, kept in a file: a stand-in for a database row. Reading and
 * writing are separate awaits, so two unguarded increments can read the same value and one update
 * is lost.
 */
export class CounterStore {
  constructor(private readonly file: string) {}

  async reset(): Promise<void> {
    await this.replace({ value: 0, fencingToken: '' });
  }

  async read(): Promise<number> {
    return (await this.load()).value;
  }

  /**
   * With a token, refuses one lower than the last it accepted: a holder whose lock expired while it
   * was paused must not overwrite the work of the holder that came after it.
   */
  async write(value: number, fencingToken = ''): Promise<void> {
    const current = await this.load();
    if (fencingToken && fencingToken < current.fencingToken) {
      throw new Error(`stale fencing token ${fencingToken} < ${current.fencingToken}: write refused`);
    }
    await this.replace({ value, fencingToken: fencingToken || current.fencingToken });
  }

  private async load(): Promise<CounterRow> {
    return JSON.parse(await readFile(this.file, 'utf8')) as CounterRow;
  }

  /** Write-then-rename, so a concurrent reader sees the old or the new content, never half of it. */
  private async replace(row: CounterRow): Promise<void> {
    // pid + sequence: unique across the processes sharing the file, so their temp files never collide.
    const temporary = `${this.file}.${process.pid}.${++writes}`;
    await writeFile(temporary, JSON.stringify(row));
    await rename(temporary, this.file);
  }
}

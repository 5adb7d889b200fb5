import { Injectable } from '@nestjs/common';
import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A counter with a read-modify-write that awaits in between, so that unlocked concurrent increments
 * lose updates. With COUNTER_FILE set it lives in that file, shared by every app process using it.
 */
@Injectable()
export class CounterStore {
  private value = 0;
  private readonly file = process.env.COUNTER_FILE;

  async read(): Promise<number> {
    if (!this.file) return this.value;
    try {
      return Number(await readFile(this.file, 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
  }

  async increment(): Promise<number> {
    const next = (await this.read()) + 1;
    await sleep(2);
    if (this.file) await writeFile(this.file, String(next));
    else this.value = next;
    return next;
  }
}

/**
 * The TLS keys and certificates of one Vitest run, made once (by the first test file that asks) and
 * shared by every file of the run. Made with openssl they cost about a second, but on a machine
 * without it keytool runs some twenty times, a JVM each: on 2 shared cores over a minute per file
 * (see tls-materials.ts). What the files prove does not depend on whose keys
 * they are, only on what each key is (the same CA, rogue client, ...), which is the same either way.
 *
 * Shared only inside the run's own directory (test/support/run-temp-dir.ts sets
 * NESTJS_ZK_LOCK_RUN_DIR), which the run removes when it ends; a script run outside Vitest makes its
 * own, as before. The first file takes a lock file and makes them; the others wait for them.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTlsMaterials, type TlsMaterials } from './tls-materials.js';

/** How long a file waits for another's keys before making its own (keytool under a load of 20). */
const WAIT_MS = 150_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The run's shared materials; remove() leaves them to the run (other files may still use them). */
export function runTlsMaterials(): TlsMaterials {
  const runDir = process.env.NESTJS_ZK_LOCK_RUN_DIR;
  if (!runDir || !existsSync(runDir)) return makeTlsMaterials();
  const ready = join(runDir, 'tls-materials.json');
  const lock = join(runDir, 'tls-materials.lock');
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (existsSync(ready)) return { ...(JSON.parse(readFileSync(ready, 'utf8')) as Omit<TlsMaterials, 'remove'>), remove: () => undefined };
    let fd: number | undefined;
    try {
      fd = openSync(lock, 'wx');
    } catch {
      // Another file is making them (or failed and will drop the lock): wait, within a bound.
      if (Date.now() > deadline) return makeTlsMaterials();
      sleepSync(250);
      continue;
    }
    closeSync(fd);
    try {
      const { remove: _remove, ...made } = makeTlsMaterials();
      // Written aside, then renamed, so a waiting file never reads half of it.
      writeFileSync(`${ready}.tmp`, JSON.stringify(made));
      renameSync(`${ready}.tmp`, ready);
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

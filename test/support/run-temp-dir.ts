/**
 * Vitest global setup: every temporary file of one run (test ZooKeeper data directories, TLS keys,
 * browser profiles) goes under one fresh directory, removed when the run ends. The data directories
 * the testing kit makes are otherwise removed only by an 'exit' handler, which Vitest's worker
 * processes do not always reach, and were left behind in the system temp directory by the hundred.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'nestjs-zk-lock-run-'));
  // Read by os.tmpdir() in this process and in the worker processes Vitest forks after this.
  process.env.TMPDIR = dir;
  // Tells the workers that this directory is the run's own: what is made once per run (the TLS keys
  // of test/support/tls-materials.ts) is shared there only, never in a system temp directory.
  process.env.NESTJS_ZK_LOCK_RUN_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

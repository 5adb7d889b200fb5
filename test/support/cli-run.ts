/** The built CLI (`npm run build` writes it), run to its end as a user runs it. */
import { execFile } from 'node:child_process';

export const CLI = 'dist/cli/main.js';

/** Runs `node dist/cli/main.js ...args`; resolves with its exit code and output. */
export function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

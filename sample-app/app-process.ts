import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

/** A running `main.js`. */
export interface AppProcess {
  readonly name: string;
  readonly url: string;
  /** SIGTERM, SIGKILL after 5 s; resolves with how it ended once it has exited. */
  stop(): Promise<string>;
}

// Whatever way the demo ends, no instance outlives it.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts one instance and resolves once it printed its ready line; its other output is passed through, prefixed. */
export async function startAppProcess(name: string, port: number, env: Record<string, string>): Promise<AppProcess> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, INSTANCE: name, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(signal ? `signal ${signal}` : `exit code ${code}`);
    }),
  );
  createInterface({ input: child.stderr }).on('line', (line) => console.error(`  [${name}] ${line}`));

  const readyLine = `ready ${name} ${port}`;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${name} was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line !== readyLine) return console.log(`  [${name}] ${line}`);
      clearTimeout(timer);
      resolve();
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`instance ${name} ended (${how}) before it was ready`));
    });
  });

  const stop = async (): Promise<string> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      void exited.then(() => clearTimeout(timer));
    }
    return exited;
  };

  try {
    await ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return { name, url: `http://127.0.0.1:${port}`, stop };
}

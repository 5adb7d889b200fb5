/**
 * The tick app (test/support/tick-app, built to build/test/support/tick-app/main.js by `npm run
 * build:sample`) as real processes, for the e2e tests: start an instance and read what it prints.
 * Each instance runs with the shifted-clock preload (CLOCK_OFFSET_MS, 0 unless given); its stderr
 * goes to the test's stderr and to `onStderr`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const TICK_APP_MAIN = join(process.cwd(), 'build/test/support/tick-app/main.js');
const PRELOAD = join(process.cwd(), 'build/test/support/shifted-clock.js');

/** How a process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface TickApp {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
}

export interface TickAppOptions {
  /** The app's environment (ZK_CONNECT, ROOT_PATH, SESSION_TIMEOUT_MS, JOBS, …), INSTANCE aside. */
  readonly env: Record<string, string>;
  /** Its clock, in ms from the real one. @default 0 */
  readonly offsetMs?: number;
  /** Each line it prints to stdout, in order (from start-up on). */
  readonly onLine: (line: string) => void;
  /** What it writes to stderr (Nest's errors and warnings). */
  readonly onStderr?: (text: string) => void;
}

/** How long an instance may take to start (the tests' set-up hooks allow more). */
export const START_TIMEOUT_MS = 100_000;

/** Throws unless the tick app was built. */
export function assertTickAppBuilt(): void {
  if (!existsSync(TICK_APP_MAIN)) throw new Error(`${TICK_APP_MAIN} is missing: run \`npm run build:sample\` (npm test does)`);
}

/** Starts an instance named `name` (INSTANCE); resolves once it printed `ready <name>`. */
export function startTickApp(name: string, { env, offsetMs = 0, onLine, onStderr }: TickAppOptions): Promise<TickApp> {
  const child = spawn(process.execPath, ['--import', PRELOAD, TICK_APP_MAIN], {
    env: { ...process.env, ...env, INSTANCE: name, CLOCK_OFFSET_MS: String(offsetMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr!.on('data', (chunk: Buffer) => {
    onStderr?.(chunk.toString());
    process.stderr.write(chunk);
  });
  return new Promise<TickApp>((resolve, reject) => {
    // A bound for a broken app, not a measurement: five Nest apps starting at once on a loaded
    // machine have taken over 30 s.
    const timer = setTimeout(() => reject(new Error(`${name} did not print \`ready ${name}\` within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      onLine(line);
      if (line === `ready ${name}`) {
        clearTimeout(timer);
        resolve({ name, child, exited });
      }
    });
    child.once('exit', () => reject(new Error(`${name} exited during start-up`)));
  });
}

/**
 * Sends `signal` to an instance and waits for it to exit (at most `timeoutMs`, then it is killed
 * and this rejects). Resolves at once when it has already exited.
 */
export async function stopTickApp(app: TickApp, signal: NodeJS.Signals, timeoutMs = 30_000): Promise<Exit> {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return app.exited;
  app.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      app.child.kill('SIGKILL');
      reject(new Error(`${app.name} did not exit within ${timeoutMs} ms of ${signal}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([app.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A line `<word> <job> <instance> <real ms> <value>` (`ran`, `elected`, `revoked`): the real clock
 * is comparable across the instances of one machine; `value` is what the word's line carries (the
 * instance's own clock when the scheduler called a @DistributedLock job, a fencing token).
 */
export interface TimedLine {
  readonly word: string;
  readonly job: string;
  readonly instance: string;
  /** Real time, in ms since the epoch. */
  readonly at: number;
  readonly value: string;
}

/** The fields of a timed line, or undefined for another one (`ready`, `skipped`). */
export function timedLine(line: string): TimedLine | undefined {
  const [word, job, instance, at, value] = line.split(' ');
  if (word !== 'ran' && word !== 'elected' && word !== 'revoked') return undefined;
  return { word, job: job!, instance: instance!, at: Number(at), value: value ?? '' };
}

/** A run an instance skipped: of which lock, why, and its own clock when the scheduler called it. */
export interface SkippedCall {
  readonly resource: string;
  readonly reason: string;
  readonly instance: string;
  readonly calledAt: number;
}

/** The fields of a `skipped <resource> <reason> <instance> <called ms>` line, or undefined for another one. */
export function skippedCall(line: string): SkippedCall | undefined {
  const [word, resource, reason, instance, calledAt] = line.split(' ');
  return word === 'skipped' ? { resource: resource!, reason: reason!, instance: instance!, calledAt: Number(calledAt) } : undefined;
}

/** `<resource> <reason>` of a `skipped <resource> <reason> …` line, or undefined for another one. */
export function skippedLine(line: string): string | undefined {
  const [word, resource, reason] = line.split(' ');
  return word === 'skipped' ? `${resource} ${reason}` : undefined;
}

/** A stall an instance measured: its event loop held up from `at` (real ms) for `ms`. */
export interface Stall {
  readonly instance: string;
  readonly at: number;
  readonly ms: number;
}

/** The fields of a `stall <instance> <real ms> <ms>` line, or undefined for another one. */
export function stallLine(line: string): Stall | undefined {
  const [word, instance, at, ms] = line.split(' ');
  return word === 'stall' ? { instance: instance!, at: Number(at), ms: Number(ms) } : undefined;
}

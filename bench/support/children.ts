/**
 * Every process the benchmark starts goes through here, so that all of them are killed however the
 * run ends: normally, by an error, or by Ctrl-C (see stopEverything in run.ts). Workers also exit by
 * themselves when their stdin closes, that is when this process is gone.
 */
import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { type Command, formatCommand } from './protocol.js';

const live = new Set<ChildProcess>();

process.once('exit', () => killAllChildren());

/** SIGKILLs every child still running. Synchronous, so it also works from an 'exit' handler. */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

export function startChild(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Resolves with how the child ended, once it has exited. */
export function exited(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(describeExit(child.exitCode, child.signalCode));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(describeExit(code, signal))));
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

/** Keeps the last lines a child wrote to stderr, for error messages. */
function stderrTail(child: ChildProcess, label: string, echo: boolean): () => string {
  const lines: string[] = [];
  if (child.stderr) {
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      if (lines.length > 20) lines.shift();
      if (echo) console.error(`  [${label}] ${line}`);
    });
  }
  return () => lines.join('\n');
}

/** A long-lived worker speaking the line protocol of protocol.ts. */
export class LineWorker {
  private readonly lines: Interface;
  private readonly answers: string[] = [];
  private waiting: ((line: string | Error) => void) | undefined;
  private readonly tail: () => string;
  private ended: string | undefined;

  constructor(
    readonly label: string,
    private readonly child: ChildProcess,
  ) {
    this.tail = stderrTail(child, label, process.env.BENCH_VERBOSE === '1');
    this.lines = createInterface({ input: child.stdout! });
    this.lines.on('line', (line) => {
      if (this.waiting) {
        const wake = this.waiting;
        this.waiting = undefined;
        wake(line);
      } else this.answers.push(line);
    });
    void exited(child).then((how) => {
      this.ended = how;
      this.waiting?.(new Error(`${label} ended (${how}) while answering; its stderr:\n${this.tail()}`));
      this.waiting = undefined;
    });
    child.stdin!.on('error', () => undefined); // a dead worker is reported by ask()
  }

  static start(label: string, command: string, args: string[], options: SpawnOptions = {}): LineWorker {
    return new LineWorker(label, startChild(command, args, options));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends one command and resolves with its answer; rejects on `{ error }`, exit, or timeout. */
  async ask<T>(command: Command, timeoutMs = 300_000): Promise<T> {
    if (this.ended) throw new Error(`${this.label} has ended (${this.ended}); its stderr:\n${this.tail()}`);
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`${this.label}: no answer to "${command.name}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = (answer) => {
        clearTimeout(timer);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      };
      const queued = this.answers.shift();
      if (queued !== undefined) this.waiting(queued);
      this.child.stdin!.write(`${formatCommand(command)}\n`);
    });
    let answer: T & { error?: string };
    try {
      answer = JSON.parse(line) as T & { error?: string };
    } catch {
      throw new Error(`${this.label} answered "${command.name}" with something that is not JSON: ${line.slice(0, 200)}`);
    }
    if (answer.error) throw new Error(`${this.label} failed "${command.name}": ${answer.error}\n${this.tail()}`);
    return answer;
  }

  /** Asks it to quit, and kills it if it has not exited 5 s later. */
  async stop(): Promise<void> {
    if (!this.ended) {
      this.child.stdin!.end(`${formatCommand({ name: 'quit' })}\n`);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exited(this.child);
      clearTimeout(timer);
    }
    this.lines.close();
  }
}

/**
 * Runs a one-shot worker: `node <script> <json config>`; it writes progress to stderr and its result
 * as the last line of stdout. Rejects with its stderr when it fails.
 */
export async function runOnce<T>(label: string, script: string, config: unknown, nodeFlags: string[] = [], timeoutMs = 600_000): Promise<T> {
  const child = startChild(process.execPath, [...nodeFlags, script, JSON.stringify(config)]);
  const tail = stderrTail(child, label, true);
  let last = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.trim()) last = line;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const how = await exited(child);
  clearTimeout(timer);
  if (how !== 'exit code 0') throw new Error(`${label} ended (${how}); its stderr:\n${tail()}`);
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${label}: its last line is not a JSON result: ${last.slice(0, 200)}`);
  }
}

#!/usr/bin/env node
import { CliUsageError, parseCommand, USAGE } from './args.js';
import { messageOf } from './cli-connection.js';
import { runInspect } from './inspect-command.js';
import { runRevoke } from './revoke-command.js';

/**
 * The `nestjs-zk-lock` command (inspect, revoke). Exit codes: 0 done, 1 ZooKeeper could not be
 * read or written, 2 bad command line.
 */
async function main(argv: readonly string[]): Promise<number> {
  const output = { out: (text: string) => process.stdout.write(text), err: (text: string) => process.stderr.write(text) };
  let command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    process.stderr.write(`nestjs-zk-lock: ${messageOf(error)}\n`);
    return 2;
  }
  if (command.name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  try {
    if (command.name === 'revoke') await runRevoke(command.args, output, stop.signal);
    else await runInspect(command.args, output, stop.signal);
    return 0;
  } catch (error) {
    process.stderr.write(`nestjs-zk-lock: ${messageOf(error)}\n`);
    return error instanceof CliUsageError ? 2 : 1;
  }
}

// No top-level await: the published build is CommonJS.
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

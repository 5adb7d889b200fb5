/**
 * Starting child processes that inherit none of this process's open files except stdio (and Node's
 * IPC channel, when there is one).
 *
 * The library's own addon marks its sockets close-on-exec, but other descriptors of a test process
 * (another ZooKeeper binding, a proxy's sockets) may not be: a child process started while a
 * ZooKeeper connection is open could keep a copy of its socket. If that server then goes away, the socket
 * stays open in the child, epoll goes on reporting it to this process under its old descriptor
 * number, and once the C client reuses that number for its next connection it sees only those
 * phantom events: the session never reconnects (nor does a fresh one on that number). Test servers
 * restarted while a test's own connection is open were exactly such children.
 */
import { type ForkOptions } from 'node:child_process';
import { existsSync } from 'node:fs';

const BASH = '/bin/bash';

/** Closes every descriptor above 2 except Node's IPC channel (`/proc` lists them on Linux). */
export const CLOSE_INHERITED_FDS =
  'for f in /proc/$$/fd/*; do n=${f##*/}; ' +
  'if [ "$n" -gt 2 ] && [ "$n" != "${NODE_CHANNEL_FD:-}" ]; then eval "exec $n>&-" 2>/dev/null; fi; done';

/** `bash -c` script: close the inherited descriptors, then become the command given as "$@". */
const EXEC_ISOLATED = `${CLOSE_INHERITED_FDS}; exec "$@"`;

let canIsolate: boolean | undefined;

/** True where the descriptors can be closed before exec (Linux with bash). */
export function canCloseInheritedFds(): boolean {
  canIsolate ??= process.platform === 'linux' && existsSync('/proc/self/fd') && existsSync(BASH);
  return canIsolate;
}

/** `command args` as a command line that first closes the inherited descriptors, where possible. */
export function isolatedCommand(command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!canCloseInheritedFds()) return { command, args: [...args] };
  return { command: BASH, args: ['-c', EXEC_ISOLATED, 'bash', command, ...args] };
}

/** `child_process.fork` options that run the module through the same descriptor-closing shell. */
export function isolatedForkOptions(): Pick<ForkOptions, 'execPath' | 'execArgv'> {
  if (!canCloseInheritedFds()) return {};
  return { execPath: BASH, execArgv: ['-c', EXEC_ISOLATED, 'bash', process.execPath, ...process.execArgv] };
}

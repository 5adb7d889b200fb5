import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Busy processes, one per core by default, so that a test runs as it would in a loaded suite: the
 * ZooKeeper servers, the client's event loop and its timers all wait for the CPU. Stop it with
 * the returned function (also stopped if the test process exits).
 */
export function startCpuLoad(processes = availableParallelism()): () => Promise<void> {
  const children: ChildProcess[] = [];
  for (let i = 0; i < processes; i++) {
    children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  }
  const killAll = () => children.forEach((child) => child.kill('SIGKILL'));
  process.once('exit', killAll);
  return async () => {
    process.off('exit', killAll);
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((exited) => {
            if (child.exitCode !== null || child.signalCode !== null) return exited();
            child.once('exit', () => exited());
            child.kill('SIGKILL');
          }),
      ),
    );
  };
}

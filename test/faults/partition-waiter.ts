/**
 * W of a partition trial, in a process of its own (so that nothing the holder's process does can
 * delay or hurry what W sees): connects, asks for the lock (or, for the election kind, joins the
 * election and waits to lead: `leadership()`), tells the parent when it was granted
 * (on the machine's clock: `performance.timeOrigin + performance.now()`), then waits to be told to
 * release and stop. Arguments come as one JSON message: { connect, rootPath, kind, sessionTimeoutMs, tls }.
 */
import { LockService } from '../../lib/service/lock.service.js';
import type { LockHandle } from '../../lib/recipes/lock-handle.js';
import type { ZkTlsOptions } from '../../lib/zookeeper/zk-tls.options.js';

interface Task {
  connect: string;
  rootPath: string;
  kind: 'exclusive' | 'write' | 'semaphore' | 'simple' | 'election';
  sessionTimeoutMs: number;
  /** TLS to the servers' secure ports; undefined: plain TCP. */
  tls?: ZkTlsOptions;
}

const send = (message: object): void => {
  process.send?.(message);
};

process.once('message', (task: Task) => {
  void run(task).catch((error: unknown) => {
    send({ type: 'failed', error: String(error) });
    process.exit(1);
  });
});

async function run(task: Task): Promise<void> {
  const locks = new LockService({ connectionString: task.connect, rootPath: task.rootPath, sessionTimeoutMs: task.sessionTimeoutMs, rootAclCheck: 'off', tls: task.tls });
  await locks.onModuleInit();
  if (task.kind === 'election') {
    const election = locks.elect('r', { id: 'W' });
    send({ type: 'waiting' });
    await election.leadership();
    send({ type: 'granted', at: performance.timeOrigin + performance.now() });
    return stop(locks); // shutdown leaves the election
  }
  const acquiring: Promise<LockHandle> =
    task.kind === 'write'
      ? locks.acquire('r', { mode: 'read' })
      : task.kind === 'semaphore'
        ? locks.semaphore('r', { permits: 1 })
        : locks.acquire('r', { mode: task.kind === 'simple' ? 'simple' : 'exclusive' });
  send({ type: 'waiting' });
  const lock = await acquiring;
  send({ type: 'granted', at: performance.timeOrigin + performance.now() });
  await stop(locks, lock);
}

/** Waits to be told to stop; releases the lock (when there is one), shuts down, exits. */
async function stop(locks: LockService, lock?: LockHandle): Promise<void> {
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  await lock?.release().catch(() => undefined);
  await locks.beforeApplicationShutdown();
  await locks.onApplicationShutdown();
  process.exit(0);
}

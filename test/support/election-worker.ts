/**
 * One participant of the election-processes test, in a process of its own (compiled by
 * `npm run build:sample` to build/test/support/election-worker.js): a LockService (no Nest) that
 * joins `elect(group, { id })` and reports over the fork IPC channel, with times on the machine's
 * clock (`performance.timeOrigin + performance.now()`, which the parent and the other workers share):
 *
 * - `{ type: 'queued', at, participants }` once its own node is listed;
 * - `{ type: 'elected', at, token }` when `leadership()` resolves;
 * - every 20 ms while it believes it leads (its term's `signal` not aborted), `handle.assertHeld(0)`
 *   and then `{ type: 'acted', at }`, or `{ type: 'assert-failed', at, reason }` when it throws;
 * - `{ type: 'revoked', at, reason, end }` when the term's `signal` aborts (LeadershipLostError);
 * - `{ type: 'failed', error }` when something else goes wrong.
 *
 * Arguments come as one JSON message: { connect, rootPath, group, id, sessionTimeoutMs, leaseMarginMs }. The
 * message 'stop' leaves the election and exits; so does losing the parent.
 */
import { LockService } from '../../lib/service/lock.service.js';
import type { LeadershipLostError } from '../../lib/errors.js';
import type { LeaderHandle } from '../../lib/recipes/leader-handle.js';

export interface ElectionWorkerTask {
  connect: string;
  rootPath: string;
  group: string;
  id: string;
  sessionTimeoutMs: number;
  /** undefined: the default. */
  leaseMarginMs?: number;
}

export type ElectionWorkerMessage =
  | { type: 'queued'; at: number; participants: string[] }
  | { type: 'elected'; at: number; token: string }
  | { type: 'acted'; at: number }
  | { type: 'assert-failed'; at: number; reason: string }
  | { type: 'revoked'; at: number; reason: string; end: string }
  | { type: 'failed'; error: string };

const ACT_EVERY_MS = 20;

const clock = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const send = (message: ElectionWorkerMessage): void => {
  process.send?.(message);
};

let locks: LockService | undefined;
let stopping = false;

process.on('disconnect', () => process.exit(0)); // the parent is gone
process.on('message', (message: ElectionWorkerTask | 'stop') => {
  if (message === 'stop') void stop();
  else
    void run(message).catch((error: unknown) => {
      send({ type: 'failed', error: String(error) });
      process.exit(1);
    });
});

async function run(task: ElectionWorkerTask): Promise<void> {
  locks = new LockService({ connectionString: task.connect, rootPath: task.rootPath, sessionTimeoutMs: task.sessionTimeoutMs, leaseMarginMs: task.leaseMarginMs, rootAclCheck: 'off' });
  await locks.onModuleInit();
  const election = locks.elect(task.group, { id: task.id });
  for (;;) {
    const participants = await election.participants();
    if (participants.includes(task.id)) {
      send({ type: 'queued', at: clock(), participants });
      break;
    }
    await sleep(50);
  }
  while (!stopping) {
    const handle = await election.leadership().catch((error: unknown) => {
      if (stopping) return undefined;
      throw error;
    });
    if (!handle) return;
    await lead(handle);
  }
}

/** One term: acts every 20 ms, each act guarded by `assertHeld(0)`, until `signal` aborts. */
async function lead(handle: LeaderHandle): Promise<void> {
  send({ type: 'elected', at: clock(), token: handle.fencingToken });
  const { signal } = handle;
  const ended = new Promise<void>((resolve) => {
    const revoked = (): void => {
      const error = signal.reason as LeadershipLostError;
      send({ type: 'revoked', at: clock(), reason: error.reason, end: error.end });
      resolve();
    };
    if (signal.aborted) revoked();
    else signal.addEventListener('abort', revoked, { once: true });
  });
  while (!signal.aborted) {
    try {
      handle.assertHeld(0);
      send({ type: 'acted', at: clock() });
    } catch (error) {
      send({ type: 'assert-failed', at: clock(), reason: (error as LeadershipLostError).reason ?? String(error) });
    }
    await Promise.race([sleep(ACT_EVERY_MS), ended]);
  }
}

async function stop(): Promise<void> {
  stopping = true;
  if (locks) {
    await locks.beforeApplicationShutdown().catch(() => undefined);
    await locks.onApplicationShutdown().catch(() => undefined);
  }
  process.exit(0);
}

/**
 * One client of the fault suite, in its own process: takes locks on a few resources in a loop, sends
 * fenced writes while it holds them, and reports every event to the harness (over the fork IPC
 * channel). It stops when told, or when the harness goes away.
 */
import { LockLostError, LockTimeoutError } from '../../lib/errors.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { CohortLock } from '../../lib/recipes/cohort-lock.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { ReadWriteLock } from '../../lib/recipes/read-write-lock.js';
import type { QueueLock } from '../../lib/recipes/queue-lock.js';
import type { LockRecipe } from '../../lib/recipes/recipe-runtime.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { countingSessions } from '../support/counting-sessions.js';
import { type ClientEvent, type HarnessMessage, type LockMode, monotonicMs, type WorkerConfig, type WorkerMessage } from './history.js';

const send = (message: WorkerMessage): void => {
  process.send?.(message);
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let stopping = false;
let markNextCreate = false;
let nextOp: { resource: string; mode: LockMode; holdMs: number } | undefined;

process.on('disconnect', () => process.exit(0)); // the harness is gone
process.on('message', (message: HarnessMessage) => {
  if (message.kind === 'start') void run(message.config);
  else if (message.kind === 'stop') stopping = true;
  else if (message.kind === 'mark-next-create') markNextCreate = true;
  else if (message.kind === 'next') nextOp = message;
});

async function run(config: WorkerConfig): Promise<void> {
  const { client } = config;
  let seed = config.seed;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const emit = (event: ClientEvent): void => send({ kind: 'event', event });

  const connection = new ZkConnection({ connectionString: config.connectionString, tls: config.tls, sessionTimeoutMs: config.sessionTimeoutMs, leaseMarginMs: config.leaseMarginMs, connectTimeoutMs: 60_000 });
  connection.onStateChange(() => reportSession());
  const reportSession = (): void => {
    const credentials = connection.sessionCredentials();
    if (credentials) send({ kind: 'session', client, ...credentials });
  };
  await connection.connect();
  reportSession();
  // The only node writes the recipes here make are releases that grant by write (there are no semaphores): count
  // them, to show the suite exercises grant by write.
  const { source: sessions, counts } = countingSessions(connection);
  const fair = new FairLock(sessions, { rootPath: config.rootPath });
  const readWrite = new ReadWriteLock(sessions, { rootPath: config.rootPath });
  const { cohort } = config;
  const recipes: Record<LockMode, LockRecipe> = {
    exclusive: cohort ? new CohortLock(fair, cohort) : fair,
    // (ReadWriteLock.write is a queue, which the library's own CohortLock may stand in front of.)
    write: cohort ? new CohortLock(readWrite.write as QueueLock, cohort, () => undefined) : readWrite.write,
    read: readWrite.read,
  };
  const resources = Object.keys(config.resources);
  let ops = 0;

  const caller = async (): Promise<void> => {
    while (!stopping) {
      const op = ++ops;
      const directed = nextOp;
      nextOp = undefined;
      const resource = directed?.resource ?? pick(resources);
      const mode: LockMode = directed?.mode ?? pick(config.resources[resource]!);
      emit({ type: 'requested', client, op, resource, mode, t: monotonicMs() });
      if (markNextCreate) {
        markNextCreate = false;
        send({ kind: 'creating', client });
      }
      let lock: GrantedLock;
      try {
        lock = (await recipes[mode].acquire(resource, { waitTimeoutMs: config.waitTimeoutMs })) as GrantedLock;
      } catch (error) {
        if (error instanceof LockTimeoutError) emit({ type: 'timed-out', client, op, t: monotonicMs() });
        else emit({ type: 'failed', client, op, t: monotonicMs(), error: String(error) });
        continue;
      }
      const granted = monotonicMs();
      emit({
        type: 'granted',
        client,
        op,
        resource,
        mode,
        t: granted,
        token: lock.fencingToken,
        sequence: Number(lock.path.slice(-10)),
        queueId: lock.queueId,
        session: lock.session.id,
      });
      const lost = (): void => emit({ type: 'lost', client, op, t: monotonicMs(), detail: String((lock.signal.reason as Error).message) });
      // A lock can be lost before its caller gets to look at it (a session ending as the grant came).
      if (lock.signal.aborted) lost();
      else lock.signal.addEventListener('abort', lost, { once: true });
      // As a careful holder would: write only while the library has not said the lock is lost.
      const write = (): void => {
        if (!lock.signal.aborted) send({ kind: 'write', write: { client, op, resource, mode, token: lock.fencingToken, t: monotonicMs() } });
      };
      write();
      await sleep(directed?.holdMs ?? random() * config.holdMs);
      write();
      emit({ type: 'releasing', client, op, t: monotonicMs() });
      try {
        await lock.release();
        emit({ type: 'released', client, op, t: monotonicMs() });
      } catch (error) {
        if (!(error instanceof LockLostError)) emit({ type: 'failed', client, op, t: monotonicMs(), error: String(error) });
      }
      await sleep(random() * config.thinkMs);
    }
  };
  await Promise.all(Array.from({ length: config.callers }, caller));
  connection.close();
  // Closing the IPC channel once the last message is out lets the process end.
  process.send?.({ kind: 'done', client, writeGrants: counts.multi } satisfies WorkerMessage, () => process.disconnect());
}

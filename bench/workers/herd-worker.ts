/**
 * The herd workload, in a process of its own: 1 holder and 100 waiters, each with its own session
 * (101 ZooKeeper sessions in this process), queued on one lock; then the lock is released one holder
 * at a time, and for every release the server's counters tell how many watch notifications it sent
 * and how many requests it served until the next holder had the lock and everything was quiet.
 *
 * - `ours`: FairLock on a ZkConnection per participant (each waiter watches its predecessor only).
 * - `naive`: the textbook recipe without the herd fix, written here with the raw client: create an
 *   EPHEMERAL_SEQUENTIAL node, then list the children with a watch; the lowest holds; everyone else
 *   lists again whenever the children change.
 *
 * Quiet means: the new holder has the lock and the server holds exactly the watches the recipe
 * leaves in its steady state (ours: one per waiter; naive: one per waiter plus the new holder's own,
 * from the listing that made it the holder). The naive recipe also stampedes while the queue
 * builds up (every create wakes every waiter); only releases are measured.
 * Config (argv[2], JSON): { connect, port, sessionTimeoutMs, waiters, recipe }. Result: last stdout line.
 */
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { CREATE_FLAGS, type NativeHandle } from '../../lib/zookeeper/native-client.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { diffCounters, readCounters, waitForCounters } from '../support/mntr.js';
import { connectRaw, ensurePath, isLowest } from './raw-client.js';

interface Config {
  connect: string;
  port: number;
  sessionTimeoutMs: number;
  waiters: number;
  recipe: 'ours' | 'naive';
}

export interface HerdResult {
  recipe: string;
  waiters: number;
  releases: number;
  notificationsPerRelease: number[];
  requestsPerRelease: number[];
  handoffMs: number[];
}

/** One participant: `start()` queues it and resolves once it holds the lock; `release()` lets go. */
interface Participant {
  start(): Promise<void>;
  release(): Promise<void>;
  close(): void;
}

interface Recipe {
  participants: Participant[];
  /** Watches the server holds once `waiting` participants queued behind the first holder. */
  queuedWatches(waiting: number): number;
  /** Watches the server holds once a release has settled, with `waiting` participants still queued. */
  settledWatches(waiting: number): number;
}

const config = JSON.parse(process.argv[2]!) as Config;
const PARENT_ROOT = `/bench-herd-${config.recipe}-${Date.now().toString(36)}`;

async function oursParticipants(count: number): Promise<Recipe> {
  const connections = await Promise.all(
    Array.from({ length: count }, async () => {
      const c = new ZkConnection({ connectionString: config.connect, sessionTimeoutMs: config.sessionTimeoutMs });
      await c.connect();
      return c;
    }),
  );
  const participants = connections.map((connection): Participant => {
    const lock = new FairLock(connection, { rootPath: PARENT_ROOT });
    let held: { release(): Promise<void> } | undefined;
    return {
      start: () =>
        lock.acquire('herd').then((h) => {
          held = h;
        }),
      release: () => held!.release(),
      close: () => connection.close(),
    };
  });
  return { participants, queuedWatches: (waiting) => waiting, settledWatches: (waiting) => waiting };
}

async function naiveParticipants(count: number): Promise<Recipe> {
  const clients = await Promise.all(Array.from({ length: count }, () => connectRaw(config.connect, config.sessionTimeoutMs)));
  const parent = `${PARENT_ROOT}/herd`;
  await ensurePath(clients[0]!.handle, parent);
  const participants = clients.map((client): Participant => {
    let mine = '';
    let granted = false;
    const start = (): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const handle = client.handle as NativeHandle & {
          aw_get_children2(path: string, watcher: () => void, cb: (rc: number, msg: string, children: string[]) => void): number;
        };
        const check = (): void => {
          if (granted) return; // the holder stops listening, but the watch it left still fires once
          handle.aw_get_children2(parent, check, (rc, _msg, children) => {
            if (rc !== 0) return reject(new Error(`list ${parent}: rc ${rc}`));
            if (!granted && isLowest(children, mine)) {
              granted = true;
              resolve();
            }
          });
        };
        handle.a_create(`${parent}/n-`, '', CREATE_FLAGS.EPHEMERAL_SEQUENTIAL, (rc, _msg, path) => {
          if (rc !== 0) return reject(new Error(`create under ${parent}: rc ${rc}`));
          mine = path.slice(parent.length + 1);
          check();
        });
      });
    return {
      start,
      release: () =>
        new Promise<void>((resolve, reject) =>
          client.handle.a_delete_(`${parent}/${mine}`, -1, (rc) => (rc === 0 ? resolve() : reject(new Error(`delete: rc ${rc}`)))),
        ),
      close: () => client.close(),
    };
  });
  // Each create fires every watch on the list, the holder's too (it does not set it again): queued,
  // only the waiters watch. A new holder keeps the watch its granting listing left, until it releases.
  return { participants, queuedWatches: (waiting) => waiting, settledWatches: (waiting) => waiting + 1 };
}

async function main(): Promise<HerdResult> {
  const total = config.waiters + 1;
  const { participants, queuedWatches, settledWatches }: Recipe =
    config.recipe === 'ours' ? await oursParticipants(total) : await naiveParticipants(total);
  try {
    const baseWatches = (await readCounters(config.port)).watches;
    // The holder first, then each waiter once the one before it is queued (so the queue order is the start order).
    const granted: Promise<void>[] = [participants[0]!.start()];
    await granted[0];
    for (let i = 1; i < total; i++) {
      const grant = participants[i]!.start();
      grant.catch(() => undefined); // awaited in the release loop; a failure there ends the run
      granted.push(grant);
      await waitForCounters(config.port, (c) => c.watches - baseWatches >= queuedWatches(i), 30_000, `waiter ${i} queuing`);
    }
    const result: HerdResult = {
      recipe: config.recipe,
      waiters: config.waiters,
      releases: 0,
      notificationsPerRelease: [],
      requestsPerRelease: [],
      handoffMs: [],
    };
    // Release k hands the lock from participant k to participant k + 1, with total - k - 2 still waiting after it.
    for (let k = 0; k < config.waiters; k++) {
      const before = await readCounters(config.port);
      const t0 = performance.now();
      await participants[k]!.release();
      await granted[k + 1];
      const handoff = performance.now() - t0;
      const waiting = total - k - 2;
      const after = await waitForCounters(
        config.port,
        (c) => c.watches - baseWatches === settledWatches(waiting),
        30_000,
        `release ${k + 1} settling`,
      );
      const delta = diffCounters(before, after);
      result.notificationsPerRelease.push(delta.notifications);
      result.requestsPerRelease.push(delta.requests);
      result.handoffMs.push(handoff);
      result.releases += 1;
    }
    await participants[total - 1]!.release();
    return result;
  } finally {
    for (const p of participants) p.close();
  }
}

const result = await main();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);

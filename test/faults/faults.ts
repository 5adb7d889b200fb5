/**
 * The faults the suite injects. Each one records what it does (the checker excuses nothing it was
 * not told about) and leaves the ensemble healthy when it returns.
 */
import { ZkNoNodeError, ZkNodeExistsError, ZkNotEmptyError } from '../../lib/zookeeper/zk-errors.js';
import { expireSession } from '../support/zk-admin.js';
import type { ZkServer } from '../support/zk-server.js';
import type { Partition } from '../support/zk-proxy.js';
import type { FaultHarness } from './harness.js';
import type { ClientEvent } from './history.js';

export type Fault = (harness: FaultHarness) => Promise<void>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The first resource that clients take as writers (exclusive or write). */
function writeResource(h: FaultHarness): string {
  return Object.entries(h.options.resources).find(([, modes]) => modes.some((m) => m !== 'read'))![0];
}

/** Makes `client` take `resource` next and hold it for `holdMs`; resolves once it holds it. */
async function holdNext(h: FaultHarness, client: string, holdMs: number, resource = writeResource(h)): Promise<ClientEvent> {
  const granted = h.nextEvent((e) => e.type === 'granted' && e.client === client && e.resource === resource, 60_000);
  h.tell(client, { kind: 'next', resource, mode: 'exclusive', holdMs });
  return granted;
}

function pickClient(h: FaultHarness, index = 0): string {
  const clients = h.clients();
  return clients[index % clients.length]!;
}

async function restart(h: FaultHarness, server: ZkServer): Promise<void> {
  await server.start();
  await h.healthy();
}

async function killServer(h: FaultHarness, server: ZkServer, label: string): Promise<void> {
  h.record('kill-server', `zk${server.id}`, label);
  await server.kill();
  await sleep(h.options.sessionTimeoutMs);
  h.record('start-server', `zk${server.id}`);
  await restart(h, server);
}

/** Pauses a client that holds a lock for `factor` session timeouts, then lets it go on. */
function pauseHolder(factor: number): Fault {
  return async (h) => {
    const client = pickClient(h, Math.round(factor * 2));
    await holdNext(h, client, 200);
    h.record('pause-client', client, `${factor}x session timeout`);
    process.kill(h.pid(client), 'SIGSTOP');
    await sleep(factor * h.options.sessionTimeoutMs);
    process.kill(h.pid(client), 'SIGCONT');
    h.record('resume-client', client);
    await sleep(h.options.sessionTimeoutMs);
  };
}

/**
 * Cuts a client that holds a lock off from every server, one way or both, for 1.5 session
 * timeouts, then heals it. Both ways or its requests dropped: the servers expire its session. Its
 * replies dropped: its pings still arrive and its session lives on, while it hears nothing.
 * Either way it must be told it lost the lock before anyone else is granted it.
 */
function partitionHolder(which: Exclude<Partition, 'none'>, index: number): Fault {
  return async (h) => {
    const client = pickClient(h, index);
    await holdNext(h, client, 1000);
    h.partition(client, which);
    await sleep(1.5 * h.options.sessionTimeoutMs);
    h.partition(client, 'none');
    await sleep(h.options.sessionTimeoutMs);
  };
}

export const FAULTS: Record<string, Fault> = {
  'kill-leader': async (h) => killServer(h, await h.ensemble.leader(), 'leader'),

  'kill-follower': async (h) => {
    const leader = await h.ensemble.leader();
    await killServer(h, h.ensemble.servers.find((s) => s.id !== leader.id)!, 'follower');
  },

  'kill-server-of-holder': async (h) => {
    const client = pickClient(h, 1);
    await holdNext(h, client, 1500);
    const server = await h.serverOf(client);
    if (server) await killServer(h, server, `the server ${client} is connected to, while it holds`);
  },

  'pause-leader-past-sync-limit': async (h) => {
    const leader = await h.ensemble.leader();
    h.record('pause-server', `zk${leader.id}`, 'leader, past syncLimit');
    leader.pause();
    await sleep(2500); // syncLimit 5 ticks of 200 ms: the followers give up on it after 1 s
    leader.resume();
    h.record('resume-server', `zk${leader.id}`);
    await h.healthy();
  },

  'pause-holder-0.5x': pauseHolder(0.5),
  'pause-holder-1.5x': pauseHolder(1.5),
  'pause-holder-3x': pauseHolder(3),

  'pause-waiter-while-predecessor-releases': async (h) => {
    const holder = pickClient(h, 2);
    const waiter = pickClient(h, 3);
    const resource = writeResource(h);
    await holdNext(h, holder, 600, resource);
    const queued = h.nextEvent((e) => e.type === 'requested' && e.client === waiter && e.resource === resource, 60_000);
    h.tell(waiter, { kind: 'next', resource, mode: 'exclusive', holdMs: 10 });
    await queued;
    await sleep(50); // its node is created and its watch set
    h.record('pause-client', waiter, 'waiting while its predecessor releases');
    process.kill(h.pid(waiter), 'SIGSTOP');
    await h.nextEvent((e) => e.type === 'releasing' && e.client === holder, 10_000).catch(() => undefined);
    await sleep(300);
    process.kill(h.pid(waiter), 'SIGCONT');
    h.record('resume-client', waiter);
    await sleep(500);
  },

  'expire-session-of-holder': async (h) => {
    const client = pickClient(h, 4);
    await holdNext(h, client, 400);
    const credentials = h.session(client);
    if (!credentials) return;
    h.record('expire-session', client);
    await expireSession(h.ensemble.connectString, credentials, async () => (await h.ensemble.leader()).connectString);
    h.record('expire-session-done', client);
    await sleep(h.options.sessionTimeoutMs);
  },

  'lose-quorum-past-session-timeout': async (h) => {
    const [a, b] = h.ensemble.servers;
    h.record('stop-server', `zk${a!.id}`);
    h.record('stop-server', `zk${b!.id}`);
    await Promise.all([a!.stop(), b!.stop()]);
    await sleep(1.5 * h.options.sessionTimeoutMs);
    h.record('start-server', `zk${a!.id}`);
    h.record('start-server', `zk${b!.id}`);
    await Promise.all([a!.start(), b!.start()]);
    await h.healthy();
    await sleep(h.options.sessionTimeoutMs);
  },

  'restart-ensemble': async (h) => {
    h.record('stop-ensemble');
    await Promise.all(h.ensemble.servers.map((s) => s.stop()));
    h.record('start-ensemble');
    await Promise.all(h.ensemble.servers.map((s) => s.start()));
    await h.healthy();
    await sleep(h.options.sessionTimeoutMs);
  },

  'kill-server-after-create-sent': async (h) => {
    const client = pickClient(h, 5);
    const server = await h.serverOf(client);
    if (!server) return;
    const killed = new Promise<void>((resolve) =>
      h.onNextCreate(client, () => {
        h.record('kill-server', `zk${server.id}`, `right after ${client} sent a create`);
        void server.kill().then(resolve);
      }),
    );
    await Promise.race([killed, sleep(30_000)]);
    await sleep(h.options.sessionTimeoutMs / 2);
    h.record('start-server', `zk${server.id}`);
    await restart(h, server);
  },

  'recreate-parent': async (h) => {
    const resource = writeResource(h);
    const path = `${h.rootPath}/${resource}`;
    // Only an idle parent: deleting a holder's node would take its lock away behind its back.
    for (let attempt = 0; attempt < 400; attempt++) {
      const done = await h.withObserver(async (session) => {
        try {
          const { children } = await session.getChildren(path);
          if (children.length > 0) return false;
          await session.delete(path);
        } catch (error) {
          if (error instanceof ZkNotEmptyError || error instanceof ZkNoNodeError) return false;
          throw error;
        }
        h.record('recreate-parent', resource);
        await session.create(path, '', 'CONTAINER').catch((error: unknown) => {
          if (!(error instanceof ZkNodeExistsError)) throw error; // a client re-created it first
        });
        return true;
      });
      if (done) return;
      await sleep(5);
    }
    h.record('note', resource, 'the parent was never idle: not re-created');
  },

  'kill-holder': async (h) => {
    const client = pickClient(h, 6);
    await holdNext(h, client, 1000);
    h.kill(client);
    await h.spawn();
    await sleep(2 * h.options.sessionTimeoutMs);
  },

  'partition-holder-both-ways': partitionHolder('both', 8),
  'partition-holder-requests-dropped': partitionHolder('to-server', 9),
  'partition-holder-replies-dropped': partitionHolder('to-client', 10),

  // Stopped (SIGSTOP) for 1.5 session timeouts, its sockets open: its clients hear nothing, move to
  // another server within the session timeout or lose their session, and must be told either way.
  'stall-server-of-holder': async (h) => {
    const client = pickClient(h, 7);
    await holdNext(h, client, 1000);
    const server = await h.serverOf(client);
    if (!server) return;
    h.record('pause-server', `zk${server.id}`, `the server ${client} is connected to, while it holds`);
    server.pause();
    await sleep(1.5 * h.options.sessionTimeoutMs);
    server.resume();
    h.record('resume-server', `zk${server.id}`);
    await h.healthy();
  },
};

/** Runs one fault by name, recording it. */
export async function inject(h: FaultHarness, name: string): Promise<void> {
  const fault = FAULTS[name];
  if (!fault) throw new Error(`no fault named ${name}`);
  h.record(`fault:${name}`);
  await fault(h);
}

/**
 * Partition and server-loss trials: in each, a holder H holds a lock, a client W in a process of its
 * own waits for it, and a fault cuts H off from ZooKeeper. The trial records when H's `signal`
 * aborted and when W was granted, on the machine's clock. Safe means H was told first, in every
 * trial.
 *
 * H and W are LockServices with default options but for the session timeout (2 s) and rootPath,
 * on servers with ZooKeeper's default limits (syncLimit 5) and the test kit's 200 ms tick. The
 * lock kind rotates over the trials: exclusive (through the cohort queue), write (W reads),
 * a one-permit semaphore, and the simple lock. The election kind (ELECTION_KINDS) is run on its
 * own: H leads an election (`elect('r').leadership()`, its term's `signal`), W is next in line and
 * counts as granted when its own `leadership()` resolves.
 */
import { LockService } from '../../lib/service/lock.service.js';
import type { LockLostError } from '../../lib/errors.js';
import type { HeldLock } from '../../lib/recipes/lock-handle.js';
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isolatedForkOptions } from '../../lib/testing/isolated-spawn.js';
import type { ZkTlsOptions } from '../../lib/zookeeper/zk-tls.options.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { startZkEnsemble, startZkServer, type ZkServer } from '../support/zk-server.js';
import { startZkProxy, type Partition, type ZkProxy } from '../support/zk-proxy.js';
import { PLAIN_CLIENTS, type TlsZooKeeper } from '../support/zk-tls-servers.js';
import { allServing } from './ensemble-ready.js';
import { startIsolatableEnsemble } from './isolatable-ensemble.js';
import { describeTrial } from './partition-summary.js';

export const TRIAL_SESSION_TIMEOUT_MS = 2000;

/** The faults, by where they happen. */
export const STANDALONE_FAULTS = ['partition-both', 'partition-to-client', 'partition-to-server', 'stall-server'] as const;
export const ENSEMBLE_FAULTS = ['kill-follower', 'kill-leader', 'stall-follower', 'stall-leader'] as const;
export type StandaloneFault = (typeof STANDALONE_FAULTS)[number];
export type EnsembleFault = (typeof ENSEMBLE_FAULTS)[number];
/** H's follower cut off from the rest of the ensemble (it goes on serving H for syncLimit ticks). */
export type IsolationFault = 'isolate-follower';
export type PartitionFault = StandaloneFault | EnsembleFault | IsolationFault;

/** The lock kinds, in the order the trials of each fault rotate over them. */
export const LOCK_KINDS = ['exclusive', 'write', 'semaphore', 'simple'] as const;
/** H leads an election and W is next in line. */
export const ELECTION_KINDS = ['election'] as const;
export type Kind = (typeof LOCK_KINDS)[number] | (typeof ELECTION_KINDS)[number];

export interface TrialResult {
  readonly fault: PartitionFault;
  readonly kind: Kind;
  /** ms after the fault when H's signal aborted; undefined: never within the trial. */
  readonly holderToldMs: number | undefined;
  /** ms after the fault when W was granted; undefined: never within the trial. */
  readonly otherGrantedMs: number | undefined;
  /** W was granted while H had not been told. */
  readonly unsafe: boolean;
  /** Why H was told it lost the lock or its leadership (LockLostError.reason; LeadershipLostError is one). */
  readonly reason: string | undefined;
  /** How many times the trial was set up again because H lost its lock before the fault (0: never). */
  readonly setUpAgain: number;
  /** Ensemble members restarted before the trial, slow to serve again after the last fault (0: none). */
  readonly membersRestarted: number;
}

/** W's process: compiled by `npm run build:sample`, beside this file or in build/ (see harness.ts). */
const WAITER = fileURLToPath(
  import.meta.url.endsWith('.js') ? new URL('./partition-waiter.js', import.meta.url) : new URL('../../build/test/faults/partition-waiter.js', import.meta.url),
);

/** The machine's clock, which H here and W in its process share. */
const clock = (): number => performance.timeOrigin + performance.now();

/** W: a LockService in a process of its own, waiting for the lock; `granted` resolves with the time. */
async function startWaiter(connect: string, rootPath: string, kind: Kind, tls: ZkTlsOptions | undefined): Promise<{ granted: Promise<number>; stop(): Promise<void> }> {
  const child: ChildProcess = fork(WAITER, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], ...isolatedForkOptions() });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let waiting!: () => void;
  const isWaiting = new Promise<void>((resolve) => (waiting = resolve));
  const granted = new Promise<number>((resolve, reject) => {
    child.on('message', (message: { type: string; at?: number; error?: string }) => {
      if (message.type === 'waiting') waiting();
      if (message.type === 'granted') resolve(message.at!);
      if (message.type === 'failed') reject(new Error(`W failed: ${message.error}`));
    });
    void exited.then(() => reject(new Error('W exited before it was granted')));
  });
  granted.catch(() => undefined);
  child.send({ connect, rootPath, kind, tls, sessionTimeoutMs: TRIAL_SESSION_TIMEOUT_MS });
  await Promise.race([isWaiting, granted.then(() => undefined), exited]);
  return {
    granted,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.send('release');
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}

/** How long a trial watches after the fault: the session expires within ~2 timeouts of it. */
const OBSERVE_MS = 5 * TRIAL_SESSION_TIMEOUT_MS + 4000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function service(connectionString: string, rootPath: string, leaseMarginMs?: number, tls?: ZkTlsOptions): Promise<LockService> {
  const locks = new LockService({ connectionString, rootPath, sessionTimeoutMs: TRIAL_SESSION_TIMEOUT_MS, rootAclCheck: 'off', leaseMarginMs, tls });
  await locks.onModuleInit();
  return locks;
}

async function take(locks: LockService, kind: Kind, holder: boolean): Promise<Pick<HeldLock, 'signal'>> {
  switch (kind) {
    case 'election': {
      const election = locks.elect('r', { id: holder ? 'H' : 'W' });
      const term = await election.leadership();
      // Once told, H leaves the election (its candidacy would queue again, in a new session): as a
      // lock's holder that lost it does not ask again, so that W, next in line, is the one to lead
      // (after a stalled server expired both sessions, H's new entry could otherwise come first).
      term.signal.addEventListener('abort', () => void election.close(), { once: true });
      return term;
    }
    case 'exclusive':
      return locks.acquire('r');
    case 'write':
      return locks.acquire('r', { mode: holder ? 'write' : 'read' });
    case 'semaphore':
      return locks.semaphore('r', { permits: 1 });
    case 'simple':
      return locks.acquire('r', { mode: 'simple' });
  }
}

async function close(locks: LockService | undefined): Promise<void> {
  if (!locks) return;
  await locks.beforeApplicationShutdown().catch(() => undefined);
  await locks.onApplicationShutdown().catch(() => undefined);
}

/** H lost its lock before the fault was injected (its lease ran out on a busy machine): no trial. */
class LostBeforeFault extends Error {}

/** How many times a trial is set up anew when H loses its lock before the fault. */
const SETUP_ATTEMPTS = 3;

/** What one trial is: the fault, the kind, where H and W connect, how the fault is injected and healed. */
interface TrialSetup {
  readonly fault: PartitionFault;
  readonly kind: Kind;
  readonly holderConnect: string;
  readonly otherConnect: string;
  readonly inject: () => Promise<void> | void;
  readonly heal: () => Promise<void> | void;
  readonly holderLeaseMarginMs?: number;
  readonly tls: ZkTlsOptions | undefined;
}

/**
 * One trial: H (on `holderConnect`) takes the lock, W (on `otherConnect`) queues for it, `inject`
 * cuts H off; then H's loss and W's grant are timed. `heal` runs after, whatever happened. Both
 * connect with `tls` when it is given. When H loses its lock before the fault (nothing was cut
 * off yet: its lease ran out, the machine too busy to renew it), the trial is set up again, at
 * most SETUP_ATTEMPTS times in all, and the result counts it (`setUpAgain`).
 */
async function trial(setup: TrialSetup, index: number, membersRestarted = 0): Promise<TrialResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await attemptTrial(setup, `${index}${attempt ? `-${attempt}` : ''}`);
      return { ...result, setUpAgain: attempt, membersRestarted };
    } catch (error) {
      if (!(error instanceof LostBeforeFault) || attempt + 1 >= SETUP_ATTEMPTS) throw error;
      console.log(`${error.message}; setting the trial up again`);
    }
  }
}

async function attemptTrial(setup: TrialSetup, name: string): Promise<Omit<TrialResult, 'setUpAgain' | 'membersRestarted'>> {
  const { fault, kind, holderConnect, otherConnect, inject, heal, holderLeaseMarginMs, tls } = setup;
  const rootPath = `/partition-${process.pid}-${fault}-${kind}-${name}`;
  let h: LockService | undefined;
  let w: Awaited<ReturnType<typeof startWaiter>> | undefined;
  try {
    h = await service(holderConnect, rootPath, holderLeaseMarginMs, tls);
    const held = await take(h, kind, true);
    w = await startWaiter(otherConnect, rootPath, kind, tls);
    let grantedEarly = false;
    void w.granted.then(() => (grantedEarly = true), () => undefined);
    // W's entry is in the queue (or, for the simple lock, W is waiting on H's node).
    await sleep(300);
    if (held.signal.aborted) throw new LostBeforeFault(`trial ${fault}/${kind}: H lost the lock before any fault: ${String(held.signal.reason)}`);
    if (grantedEarly) throw new Error(`trial ${fault}/${kind}: W was granted while H held the lock, before any fault`);
    const told = new Promise<number>((resolve) => {
      if (held.signal.aborted) resolve(clock());
      held.signal.addEventListener('abort', () => resolve(clock()), { once: true });
    });
    const start = clock();
    await inject();
    const timeout = sleep(OBSERVE_MS).then(() => undefined);
    const [toldAt, grantedAt] = await Promise.all([Promise.race([told, timeout]), Promise.race([w.granted.catch(() => undefined), timeout])]);
    const reason = held.signal.aborted ? (held.signal.reason as LockLostError).reason : undefined;
    await heal();
    const unsafe = grantedAt !== undefined && (toldAt === undefined || grantedAt < toldAt);
    return {
      fault,
      kind,
      holderToldMs: toldAt === undefined ? undefined : toldAt - start,
      otherGrantedMs: grantedAt === undefined ? undefined : grantedAt - start,
      unsafe,
      reason,
    };
  } finally {
    await close(h);
    await w?.stop();
  }
}

/** What the standalone trials need of a proxy (the ZooKeeper-aware one over TCP, a plain forwarder over TLS). */
type PartitionProxy = Pick<ZkProxy, 'connectString' | 'partition' | 'dropConnections' | 'close'>;

/**
 * Runs `trials` trials of each fault on one standalone server, H through a proxy; over TLS when
 * `tls` is given (H and W connect to its secure port, H's proxy passes the TLS bytes through).
 * The trials rotate over `kinds` (the lock kinds unless given).
 */
export async function runStandaloneTrials(
  faults: readonly StandaloneFault[],
  trials: number,
  log: (line: string) => void = () => undefined,
  tls?: TlsZooKeeper,
  kinds: readonly Kind[] = LOCK_KINDS,
): Promise<TrialResult[]> {
  const side = tls?.side ?? PLAIN_CLIENTS;
  const server = await (tls ? tls.startServer() : startZkServer());
  const address = side.address(server);
  const proxy: PartitionProxy = tls ? await startTcpProxy(Number(address.split(':')[1])) : await startZkProxy({ port: server.clientPort });
  const results: TrialResult[] = [];
  try {
    for (const [f, fault] of faults.entries()) {
      for (let i = 0; i < trials; i++) {
        const kind = kinds[(i + f) % kinds.length]!;
        const result = await trial(
          {
            fault,
            kind,
            holderConnect: proxy.connectString,
            otherConnect: address,
            inject: injectStandalone(fault, server, proxy),
            heal: () => healStandalone(server, proxy),
            tls: side.tls,
          },
          i,
        );
        log(describeTrial(result));
        results.push(result);
      }
    }
  } finally {
    await proxy.close();
    await server.stop();
  }
  return results;
}

function injectStandalone(fault: StandaloneFault, server: ZkServer, proxy: PartitionProxy): () => Promise<void> {
  return async () => {
    if (fault === 'stall-server') {
      // Stopped for 1.5 session timeouts: on resuming, the server expires the sessions it has not
      // heard from (W's too; W queues again in a new session).
      server.pause();
      await sleep(1.5 * TRIAL_SESSION_TIMEOUT_MS);
      server.resume();
      return;
    }
    const which: Record<Exclude<StandaloneFault, 'stall-server'>, Partition> = {
      'partition-both': 'both',
      'partition-to-client': 'to-client',
      'partition-to-server': 'to-server',
    };
    proxy.partition(which[fault]);
  };
}

async function healStandalone(server: ZkServer, proxy: PartitionProxy): Promise<void> {
  proxy.partition('none');
  proxy.dropConnections();
  server.resume();
}

/**
 * Runs `trials` trials of each fault on a 3-node ensemble. H connects to one member only (the
 * leader or a follower, as the fault needs), W to the two others; the member is killed or stopped.
 * Over TLS when `tls` is given.
 * The trials rotate over `kinds` (the lock kinds unless given).
 */
export async function runEnsembleTrials(
  faults: readonly EnsembleFault[],
  trials: number,
  log: (line: string) => void = () => undefined,
  tls?: TlsZooKeeper,
  kinds: readonly Kind[] = LOCK_KINDS,
): Promise<TrialResult[]> {
  const side = tls?.side ?? PLAIN_CLIENTS;
  const ensemble = await (tls ? tls.startEnsemble(3) : startZkEnsemble(3));
  const results: TrialResult[] = [];
  try {
    for (const [f, fault] of faults.entries()) {
      for (let i = 0; i < trials; i++) {
        const kind = kinds[(i + f) % kinds.length]!;
        const restarted = await allServing(ensemble, log);
        const leader = await ensemble.leader();
        const target = fault.endsWith('leader') ? leader : ensemble.servers.find((s) => s !== leader)!;
        const others = ensemble.servers.filter((s) => s !== target).map((s) => side.address(s)).join(',');
        const result = await trial(
          {
            fault,
            kind,
            holderConnect: side.address(target),
            otherConnect: others,
            inject: async () => {
              if (fault.startsWith('kill')) await target.kill();
              else target.pause();
            },
            heal: async () => {
              if (fault.startsWith('kill')) await target.start();
              else target.resume();
            },
            tls: side.tls,
          },
          i,
          restarted,
        );
        log(describeTrial(result));
        results.push(result);
      }
    }
  } finally {
    await ensemble.stop();
  }
  return results;
}

/**
 * Runs `trials` trials of H's follower cut off from the two other members (every link between them
 * goes through a proxy that stops forwarding). The follower goes on answering H for syncLimit ticks,
 * while the leader expires H's session: the case the lease margin is for. `leaseMarginMs` is H's
 * (undefined: the default).
 * The trials rotate over `kinds` (the lock kinds unless given).
 */
export async function runIsolationTrials(
  trials: number,
  leaseMarginMs: number | undefined,
  log: (line: string) => void = () => undefined,
  tls?: TlsZooKeeper,
  kinds: readonly Kind[] = LOCK_KINDS,
): Promise<TrialResult[]> {
  const side = tls?.side ?? PLAIN_CLIENTS;
  const ensemble = await startIsolatableEnsemble(tls);
  const results: TrialResult[] = [];
  try {
    for (let i = 0; i < trials; i++) {
      const restarted = await allServing(ensemble, log);
      const [one, two, three] = ensemble.servers;
      const result = await trial(
        {
          fault: 'isolate-follower',
          kind: kinds[i % kinds.length]!,
          holderConnect: side.address(three!),
          otherConnect: `${side.address(one!)},${side.address(two!)}`,
          inject: () => ensemble.cut(true),
          heal: () => ensemble.cut(false),
          holderLeaseMarginMs: leaseMarginMs,
          tls: side.tls,
        },
        i,
        restarted,
      );
      log(`${describeTrial(result)}${leaseMarginMs === undefined ? '' : ` (leaseMarginMs ${leaseMarginMs})`}`);
      results.push(result);
    }
  } finally {
    await ensemble.stop();
  }
  return results;
}

/**
 * What the lease costs an idle holder: the renewal reads (`exists`) it puts on the wire while it
 * holds a lock and does nothing else, per session timeout, measured over `timeouts` session
 * timeouts on a standalone server. (The C client's own pings are not requests and not counted.)
 */
export async function measureLeaseCost(timeouts: number): Promise<{ requestsPerSessionTimeout: number; renewals: number; otherRequests: number }> {
  const server = await startZkServer();
  const proxy = await startZkProxy({ port: server.clientPort });
  let locks: LockService | undefined;
  try {
    locks = await service(proxy.connectString, `/lease-cost-${process.pid}`);
    const held = await locks.acquire('idle');
    proxy.clearTraffic();
    await sleep(timeouts * TRIAL_SESSION_TIMEOUT_MS);
    const requests = proxy.traffic().filter((e) => e.kind === 'request');
    const renewals = requests.filter((e) => e.kind === 'request' && e.op === 'exists').length;
    await held.release();
    return { requestsPerSessionTimeout: requests.length / timeouts, renewals, otherRequests: requests.length - renewals };
  } finally {
    await close(locks);
    await proxy.close();
    await server.stop();
  }
}

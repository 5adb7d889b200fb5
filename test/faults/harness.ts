/**
 * Runs the fault suite's clients as separate Node processes against a 3-node ensemble, collects
 * their histories and fenced writes, records what the injector does, and checks what is left at the
 * end. The faults themselves are in faults.ts.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isolatedForkOptions } from '../../lib/testing/isolated-spawn.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { ZkConnectionLossError, ZkNoNodeError, ZkSessionLostError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { eventually } from '../support/zk-admin.js';
import type { Partition } from '../support/zk-proxy.js';
import type { ZkEnsemble, ZkServer } from '../support/zk-server.js';
import { type ClientSide, PLAIN_CLIENTS } from '../support/zk-tls-servers.js';
import { type CheckResult, checkHistory } from './checker.js';
import {
  type ClientEvent,
  type FaultAction,
  type FencedWrite,
  type HarnessMessage,
  type LockMode,
  monotonicMs,
  type WorkerConfig,
  type WorkerMessage,
} from './history.js';

export interface HarnessOptions {
  readonly clients: number;
  readonly resources: Record<string, readonly LockMode[]>;
  readonly sessionTimeoutMs: number;
  readonly waitTimeoutMs: number;
  readonly holdMs: number;
  readonly thinkMs: number;
  readonly seed: number;
  /** The clients' leaseMarginMs; undefined: the library's default. */
  readonly leaseMarginMs?: number;
  /** Concurrent callers in each client process. */
  readonly callers: number;
  /** The cohort queue in each client process, with these bounds; false: none. */
  readonly cohort: false | { maxHandoffs: number; maxHoldMs: number };
}

interface Worker {
  readonly client: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  session?: { id: string; password: string };
  /** Its way to each server (one proxy per member), so that the injector can partition it. */
  readonly proxies: TcpProxy[];
  onCreating?: () => void;
  done: boolean;
  /** The injector killed it on purpose. */
  killed: boolean;
}

export interface Leftovers {
  readonly nodes: string[];
  readonly watches: number;
}

/**
 * The workers are plain Node processes, compiled by `npm run build:sample`: beside this file when it
 * runs compiled (the soak), in build/ when it runs from source (Vitest).
 */
const WORKER = fileURLToPath(
  import.meta.url.endsWith('.js') ? new URL('./fault-worker.js', import.meta.url) : new URL('../../build/test/faults/fault-worker.js', import.meta.url),
);

export class FaultHarness {
  readonly events: ClientEvent[] = [];
  /** Releases that granted by write, as told by the clients that finished. */
  private writeGrants = 0;
  readonly writes: FencedWrite[] = [];
  readonly actions: FaultAction[] = [];
  readonly rootPath = `/faults-${process.pid}-${Date.now().toString(36)}`;
  private readonly workers = new Map<string, Worker>();
  private readonly listeners = new Set<(event: ClientEvent) => void>();
  private clientCount = 0;
  private observer: ZkConnection | undefined;

  /**
   * @param clientSide how the clients under test reach the servers (plain TCP or TLS); the injector's
   *   own tools (the observer, four-letter words, expiring a session) use the plain ports.
   */
  constructor(
    readonly ensemble: ZkEnsemble,
    readonly options: HarnessOptions,
    readonly clientSide: ClientSide = PLAIN_CLIENTS,
  ) {}

  async start(): Promise<void> {
    if (!existsSync(WORKER)) throw new Error(`${WORKER} is missing: run \`npm run build:sample\` first`);
    // followEnsembleConfig off: the observer is a tool, and its /zookeeper/config watch would be counted
    // among the watches left behind by the clients under test.
    this.observer = new ZkConnection({
      connectionString: this.ensemble.connectString,
      sessionTimeoutMs: 10_000,
      connectTimeoutMs: 60_000,
      followEnsembleConfig: false,
    });
    this.observer.onStateChange((state, id) => this.record('observer', state, id));
    await this.observer.connect();
    for (let i = 0; i < this.options.clients; i++) await this.spawn();
  }

  /** Starts one more client process, which reaches each server through a proxy of its own. */
  async spawn(): Promise<string> {
    this.clientCount += 1;
    const client = `c${this.clientCount}`;
    const proxies = await Promise.all(this.ensemble.servers.map((s) => startTcpProxy(Number(this.clientSide.address(s).split(':')[1]))));
    // isolatedForkOptions: a worker must not keep the observer's socket open (see isolated-spawn.ts).
    const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...isolatedForkOptions() });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        // A worker that ends before it said it was done, and that nobody killed, crashed: its open
        // holds would otherwise show up as overlaps with everything after them.
        if (!worker.done && !worker.killed) this.record('client-died', client, `exit code ${code}, signal ${signal}`);
        void Promise.all(proxies.map((p) => p.close())).then(() => resolve());
      }),
    );
    const worker: Worker = { client, child, exited, proxies, done: false, killed: false };
    this.workers.set(client, worker);
    child.on('message', (message: WorkerMessage) => this.receive(worker, message));
    const config: WorkerConfig = {
      client,
      connectionString: proxies.map((p) => p.connectString).join(','),
      tls: this.clientSide.tls,
      rootPath: this.rootPath,
      sessionTimeoutMs: this.options.sessionTimeoutMs,
      leaseMarginMs: this.options.leaseMarginMs,
      resources: this.options.resources,
      waitTimeoutMs: this.options.waitTimeoutMs,
      holdMs: this.options.holdMs,
      thinkMs: this.options.thinkMs,
      seed: this.options.seed + this.clientCount * 7919,
      callers: this.options.callers,
      cohort: this.options.cohort,
    };
    this.tell(client, { kind: 'start', config });
    return client;
  }

  record(action: string, target?: string, detail?: string): void {
    this.actions.push({ t: monotonicMs(), action, target, detail });
  }

  tell(client: string, message: HarnessMessage): void {
    this.workers.get(client)?.child.send(message);
  }

  /** Running clients. */
  clients(): string[] {
    return [...this.workers.values()].filter((w) => w.child.exitCode === null && w.child.signalCode === null).map((w) => w.client);
  }

  session(client: string): { id: string; password: string } | undefined {
    return this.workers.get(client)?.session;
  }

  pid(client: string): number {
    return this.workers.get(client)!.child.pid!;
  }

  /** Kills a client with SIGKILL, on purpose (the checker excuses what it leaves unfinished). */
  kill(client: string): void {
    const worker = this.workers.get(client)!;
    worker.killed = true;
    this.record('kill-client', client);
    worker.child.kill('SIGKILL');
  }

  /** Holds back `client`'s traffic to and from every server, one way or both ('none' heals). */
  partition(client: string, which: Partition): void {
    this.record(which === 'none' ? 'heal-client' : 'partition-client', client, which === 'none' ? undefined : which);
    for (const proxy of this.workers.get(client)!.proxies) proxy.partition(which);
  }

  /** Resolves with the first event from now on that matches. */
  nextEvent(match: (event: ClientEvent) => boolean, timeoutMs = 30_000): Promise<ClientEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error('timed out waiting for a client event'));
      }, timeoutMs);
      const listener = (event: ClientEvent): void => {
        if (!match(event)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(event);
      };
      this.listeners.add(listener);
    });
  }

  /** Calls `fn` when `client` next reports it is about to create a lock node. */
  onNextCreate(client: string, fn: () => void): void {
    const worker = this.workers.get(client)!;
    worker.onCreating = fn;
    this.tell(client, { kind: 'mark-next-create' });
  }

  /** The running server a client's session is connected to, from the servers' `cons`. */
  async serverOf(client: string): Promise<ZkServer | undefined> {
    const id = this.session(client)?.id;
    if (!id) return undefined;
    for (const server of this.ensemble.servers) {
      if (!server.running) continue;
      const cons = await this.clientSide.connections(server).catch(() => '');
      if (cons.includes(`sid=0x${id}`)) return server;
    }
    return undefined;
  }

  /** Waits until every server serves and one of them leads. */
  async healthy(): Promise<void> {
    await eventually(
      async () => {
        const modes = await Promise.all(this.ensemble.servers.map((s) => s.fourLetter('srvr').catch(() => '')));
        return modes.every((m) => /Mode: (leader|follower)/.test(m)) && modes.some((m) => /Mode: leader/.test(m));
      },
      { timeoutMs: 60_000, what: 'the ensemble to be healthy' },
    );
  }

  /**
   * Runs the injector's own ZooKeeper operations on the observer's session, again on a fresh session
   * if that one ended (the faults expire sessions, the observer's too).
   */
  async withObserver<T>(fn: (session: ZkSessionApi) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const session = await this.observer!.session(AbortSignal.timeout(30_000));
      try {
        return await fn(session);
      } catch (error) {
        if (!(error instanceof ZkSessionLostError || error instanceof ZkConnectionLossError) || attempt >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /**
   * Stops every client (each finishes its current operation), then checks the histories and what is
   * left in ZooKeeper.
   */
  async finish(): Promise<{ result: CheckResult; leftovers: Leftovers; writeGrants: number }> {
    for (const client of this.clients()) this.tell(client, { kind: 'stop' });
    const grace = this.options.waitTimeoutMs + 30_000;
    await Promise.race([
      Promise.all([...this.workers.values()].map((w) => w.exited)),
      new Promise((resolve) => setTimeout(resolve, grace)),
    ]);
    const stuck = [...this.workers.values()].filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    for (const worker of stuck) {
      this.record('stuck-client', worker.client);
      worker.killed = true;
      worker.child.kill('SIGKILL');
    }
    const runEnd = monotonicMs();
    const result = checkHistory(this.events, this.actions, this.writes, runEnd);
    if (stuck.length > 0) result.violations.unshift(`${stuck.length} clients did not finish within ${grace} ms of being told to stop`);
    for (const died of this.actions.filter((a) => a.action === 'client-died')) {
      result.violations.unshift(`client ${died.target} died on its own (${died.detail}); its unfinished holds are reported as overlaps below`);
    }
    const leftovers = await this.leftovers();
    this.observer?.close();
    return { result, leftovers, writeGrants: this.writeGrants };
  }

  /** Lock nodes still under any resource, and watches still set on any server (sessions closed). */
  private async leftovers(): Promise<Leftovers> {
    const nodes = await this.withObserver((session) => this.lockNodes(session));
    let watches = 0;
    for (const server of this.ensemble.servers) {
      const wchs = await server.fourLetter('wchs');
      watches += Number(/Total watches:(\d+)/.exec(wchs)?.[1] ?? 0);
    }
    return { nodes, watches };
  }

  private async lockNodes(session: ZkSessionApi): Promise<string[]> {
    const nodes: string[] = [];
    for (const resource of Object.keys(this.options.resources)) {
      const path = `${this.rootPath}/${resource}`;
      const children = await session.getChildren(path).then(
        (list) => list.children,
        (error: unknown) => {
          if (error instanceof ZkNoNodeError) return [];
          throw error;
        },
      );
      nodes.push(...children.map((child) => `${path}/${child}`));
    }
    return nodes;
  }

  private receive(worker: Worker, message: WorkerMessage): void {
    switch (message.kind) {
      case 'event':
        this.events.push(message.event);
        for (const listener of [...this.listeners]) listener(message.event);
        break;
      case 'write':
        this.writes.push(message.write);
        break;
      case 'session':
        worker.session = { id: message.id, password: message.password };
        break;
      case 'creating': {
        const fn = worker.onCreating;
        worker.onCreating = undefined;
        fn?.();
        break;
      }
      case 'done':
        worker.done = true;
        this.writeGrants += message.writeGrants;
        break;
    }
  }
}

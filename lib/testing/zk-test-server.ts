/**
 * Real ZooKeeper servers for tests: the server jar run by Java, on 127.0.0.1 only, with a temporary
 * data directory and a short tick, so that sessions expire in a second or two. A server counts as
 * started only once `srvr` reports a Mode (`ruok` answers before the server serves requests).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isolatedCommand } from './isolated-spawn.js';
import { freePorts, fourLetter } from './zk-net.js';
import { makeDataDir, resolveInstall, track, type ZkInstallOptions } from './zk-process.js';
import { ZkTestServerError } from './testing-errors.js';

/** Tick of the test servers, in ms: sessions may last from 2 ticks (400 ms) to 20 ticks (4 s). */
export const TEST_TICK_MS = 200;

/** Options of a test server (and of each member of a test ensemble). */
export interface ZkTestServerOptions extends ZkInstallOptions {
  /**
   * ZooKeeper's tick, in ms. The server accepts session timeouts from 2 to 20 ticks, so a short tick
   * lets a test expire sessions quickly.
   * @default 200
   */
  tickMs?: number;
  /** Client port. @default a free port */
  port?: number;
  /**
   * The loopback address the client port listens on. Another one (127.0.0.2, ...) lets a test move a
   * server to a new address: stop it, then start a server on the same port and data directory there.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Data directory (snapshots, transaction log, server.log), made if missing. Kept as it is.
   * @default a fresh directory under dataDirParent, removed at process exit (unless ZK_KEEP_DATA is set)
   */
  dataDir?: string;
  /** Where the fresh data directory is made (a tmpfs such as /dev/shm is faster). @default os.tmpdir() */
  dataDirParent?: string;
  /**
   * JVM flags before the class path.
   * @default ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'] (starts fast, stays small)
   */
  jvmFlags?: string[];
  /** How often empty container nodes (lock parents) are reaped, in ms (ZooKeeper's own default is 60000). @default 200 */
  containerCheckIntervalMs?: number;
  /**
   * More zoo.cfg lines, `key=value` (e.g. `maxClientCnxns=0` for more than 60 sessions from 127.0.0.1).
   * @default []
   */
  extraConfig?: string[];
  /** How long start() waits for the server to serve, in ms. @default 30000 */
  startTimeoutMs?: number;
}

/** A running (or stopped) ZooKeeper server process. */
export interface ZkServer {
  /** Its `myid` (1 for a standalone server). */
  readonly id: number;
  readonly clientPort: number;
  /** `<host>:<clientPort>` (127.0.0.1 unless the host option says otherwise), for ZkLockModule's connectionString. */
  readonly connectString: string;
  readonly dataDir: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Sends a four-letter word (srvr, mntr, wchp, dump, cons ...) and returns the answer. */
  fourLetter(command: string): Promise<string>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. Does nothing when stopped. */
  stop(): Promise<void>;
  /** SIGKILL, no goodbye to clients (a crash); resolves once the process has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it serves. */
  start(): Promise<void>;
  /** SIGSTOP: a frozen server whose sockets stay open (clients see timeouts, not refusals). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

const TEST_JVM_FLAGS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/**
 * Starts a standalone ZooKeeper on 127.0.0.1 and resolves once it serves. Stop it in `afterAll`
 * (it is killed anyway when the test process exits).
 * @throws ZooKeeperNotInstalledError when Java or the server jar is missing; ZkTestServerError when it does not come up.
 */
export async function startZkServer(options: ZkTestServerOptions = {}): Promise<ZkServer> {
  const port = options.port ?? (await freePorts(1))[0]!;
  const server = new JavaZkServer(1, port, options.dataDir ?? makeDataDir(options.dataDirParent), undefined, options);
  await server.start();
  return server;
}

/** One server process; also the members of an ensemble (`peers` set). */
export class JavaZkServer implements ZkServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly install: { jar: string; java: string };

  constructor(
    readonly id: number,
    readonly clientPort: number,
    readonly dataDir: string,
    /** `server.N=127.0.0.1:quorumPort:electionPort` lines of an ensemble. */
    private readonly peers: string[] | undefined,
    private readonly options: ZkTestServerOptions = {},
  ) {
    this.install = resolveInstall(options);
  }

  get connectString(): string {
    return `${this.host}:${this.clientPort}`;
  }

  private get host(): string {
    return this.options.host ?? '127.0.0.1';
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  async start(): Promise<void> {
    if (this.child) return;
    mkdirSync(this.dataDir, { recursive: true });
    const config = join(this.dataDir, 'zoo.cfg');
    writeFileSync(
      config,
      [
        `tickTime=${this.options.tickMs ?? TEST_TICK_MS}`,
        `dataDir=${this.dataDir}`,
        `clientPort=${this.clientPort}`,
        `clientPortAddress=${this.host}`,
        'initLimit=20',
        'syncLimit=5',
        '4lw.commands.whitelist=*',
        'admin.enableServer=false',
        ...(this.peers ? [...this.peers, 'electionPortBindRetry=3'] : []),
        ...(this.options.extraConfig ?? []),
        '',
      ].join('\n'),
    );
    const log = openSync(this.logFile, 'a');
    // Without the descriptor closing, the server would keep this process's ZooKeeper sockets open
    // (see isolated-spawn.ts) and a client could stop reconnecting once another server goes away.
    const command = isolatedCommand(this.install.java, [
      ...(this.options.jvmFlags ?? TEST_JVM_FLAGS),
      '-Dzookeeper.admin.enableServer=false',
      `-Dznode.container.checkIntervalMs=${this.options.containerCheckIntervalMs ?? 200}`,
      '-Dznode.container.maxPerMinute=100000',
      '-cp',
      this.install.jar,
      'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      config,
    ]);
    const child = spawn(command.command, command.args, { stdio: ['ignore', log, log] });
    this.child = child;
    child.on('error', () => undefined); // a failed spawn also exits: start() reports it from the log
    this.exited = track(child).then(() => {
      if (this.child === child) this.child = undefined;
    });
    await this.waitUntilServing();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT'); // a paused JVM cannot handle SIGTERM
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  fourLetter(command: string): Promise<string> {
    return fourLetter(this.clientPort, command, this.host);
  }

  private get logFile(): string {
    return join(this.dataDir, 'server.log');
  }

  private async waitUntilServing(): Promise<void> {
    const timeoutMs = this.options.startTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.child) throw new ZkTestServerError(`ZooKeeper ${this.id} on port ${this.clientPort} exited during start-up`, this.logFile);
      const answer = await this.fourLetter('srvr').catch(() => '');
      if (/Mode: (standalone|leader|follower|observer)/.test(answer)) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new ZkTestServerError(`ZooKeeper ${this.id} on port ${this.clientPort} did not serve within ${timeoutMs} ms`, this.logFile);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

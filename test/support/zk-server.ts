/**
 * Real ZooKeeper servers for tests and demos: Debian's `zookeeper` package run straight from its jar,
 * on free 127.0.0.1 ports, with temporary data directories and short ticks (sessions expire in a
 * second or two). A server counts as started only when `srvr` reports a Mode: `ruok` answers before
 * the server serves requests. Every server is stopped by its pid, and killed if the process exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ZK_JAR = process.env.ZK_JAR ?? '/usr/share/java/zookeeper.jar';
/** Tick in ms: min session timeout is 2 ticks, max 20. */
export const TEST_TICK_MS = 200;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface ZkServer {
  readonly id: number;
  readonly clientPort: number;
  readonly connectString: string;
  readonly dataDir: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Sends a four-letter command (srvr, mntr, wchs, dump, cons ...) and returns the answer. */
  fourLetter(command: string): Promise<string>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL, no goodbye to clients. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it serves. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a paused server, sockets open. */
  pause(): void;
  resume(): void;
}

export interface ZkEnsemble {
  readonly servers: ZkServer[];
  readonly connectString: string;
  /** The server whose `srvr` says leader (or standalone). */
  leader(): Promise<ZkServer>;
  stop(): Promise<void>;
}

export function assertZooKeeperInstalled(): void {
  if (!existsSync(ZK_JAR)) {
    throw new Error(
      `ZooKeeper server jar not found at ${ZK_JAR}. Run \`npm run zk:ensure\` (installs Debian's zookeeper ` +
        'package when run as root), or set ZK_JAR to a zookeeper jar.',
    );
  }
}

export interface ZkServerOptions {
  /** ms; min session timeout is 2 ticks, max 20. @default TEST_TICK_MS */
  tickMs?: number;
  /** Where the temporary data directory is made (the benchmark puts it on tmpfs or on disk). @default os.tmpdir() */
  dataDirParent?: string;
  /**
   * JVM flags before the class path. The default starts fast and stays small (C1 only), which suits
   * tests; the benchmark passes its own for a fully optimising server.
   */
  jvmFlags?: string[];
  /** How often empty container nodes are reaped, in ms (ZooKeeper's own default is 60000). @default 200 */
  containerCheckIntervalMs?: number;
  /** More zoo.cfg lines, `key=value` (e.g. `maxClientCnxns=0` for more than 60 sessions from 127.0.0.1). */
  extraConfig?: string[];
}

const TEST_JVM_FLAGS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

/** A standalone server. */
export async function startZkServer(options: ZkServerOptions = {}): Promise<ZkServer> {
  assertZooKeeperInstalled();
  const [clientPort] = await freePorts(1);
  const server = new JavaZkServer(1, clientPort!, makeDataDir(options.dataDirParent), options.tickMs ?? TEST_TICK_MS, undefined, options);
  await server.start();
  return server;
}

/** A 3-node (or n-node) ensemble on loopback ports. Resolves once every member serves. */
export async function startZkEnsemble(size = 3, options: { tickMs?: number } = {}): Promise<ZkEnsemble> {
  assertZooKeeperInstalled();
  const ports = await freePorts(size * 3);
  const members = Array.from({ length: size }, (_, i) => ({
    id: i + 1,
    client: ports[i * 3]!,
    quorum: ports[i * 3 + 1]!,
    election: ports[i * 3 + 2]!,
  }));
  const peers = members.map((m) => `server.${m.id}=127.0.0.1:${m.quorum}:${m.election}`);
  const servers = members.map((m) => {
    const dataDir = makeDataDir();
    writeFileSync(join(dataDir, 'myid'), `${m.id}\n`);
    return new JavaZkServer(m.id, m.client, dataDir, options.tickMs ?? TEST_TICK_MS, peers);
  });
  try {
    await Promise.all(servers.map((s) => s.start()));
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    servers,
    connectString: servers.map((s) => s.connectString).join(','),
    async leader() {
      for (const server of servers) {
        if (!server.running) continue;
        const mode = await server.fourLetter('srvr').catch(() => '');
        if (/Mode: (leader|standalone)/.test(mode)) return server;
      }
      throw new Error('no leader among the running members');
    },
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

class JavaZkServer implements ZkServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly id: number,
    readonly clientPort: number,
    readonly dataDir: string,
    private readonly tickMs: number,
    private readonly peers: string[] | undefined,
    private readonly options: ZkServerOptions = {},
  ) {}

  get connectString(): string {
    return `127.0.0.1:${this.clientPort}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const config = join(this.dataDir, 'zoo.cfg');
    writeFileSync(
      config,
      [
        `tickTime=${this.tickMs}`,
        `dataDir=${this.dataDir}`,
        `clientPort=${this.clientPort}`,
        'clientPortAddress=127.0.0.1',
        'initLimit=20',
        'syncLimit=5',
        '4lw.commands.whitelist=*',
        'admin.enableServer=false',
        ...(this.peers ? [...this.peers, 'electionPortBindRetry=3'] : []),
        ...(this.options.extraConfig ?? []),
        '',
      ].join('\n'),
    );
    const log = openSync(join(this.dataDir, 'server.log'), 'a');
    const child = spawn(
      'java',
      [
        ...(this.options.jvmFlags ?? TEST_JVM_FLAGS),
        '-Dzookeeper.admin.enableServer=false',
        `-Dznode.container.checkIntervalMs=${this.options.containerCheckIntervalMs ?? 200}`,
        '-Dznode.container.maxPerMinute=100000',
        '-cp',
        ZK_JAR,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        config,
      ],
      { stdio: ['ignore', log, log] },
    );
    this.child = child;
    running.add(child);
    watchOver(child);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        if (this.child === child) this.child = undefined;
        resolve();
      }),
    );
    await this.waitUntilServing();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGCONT');
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
    return fourLetter(this.clientPort, command);
  }

  private async waitUntilServing(): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!this.child) throw new Error(`ZooKeeper ${this.id} exited during start-up; see ${this.dataDir}/server.log`);
      const answer = await this.fourLetter('srvr').catch(() => '');
      if (/Mode: (standalone|leader|follower)/.test(answer)) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`ZooKeeper ${this.id} did not serve within 30 s; see ${this.dataDir}/server.log`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * A test process killed by a signal never runs its 'exit' handlers: a small watchdog kills the server
 * once this process is gone (and ends by itself when the server does).
 */
function watchOver(server: ChildProcess): void {
  if (!server.pid) return;
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${server.pid} 2>/dev/null; do sleep 1; done; kill -9 ${server.pid} 2>/dev/null`;
  spawn('bash', ['-c', script], { stdio: 'ignore', detached: true }).unref();
}

/** Sends a four-letter word to 127.0.0.1:port and collects the answer until the server closes. */
export function fourLetter(port: number, command: string, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    let answer = '';
    socket.setTimeout(3000, () => socket.destroy(new Error(`${command}: no answer from ${host}:${port}`)));
    socket.on('connect', () => socket.end(command));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Picks free loopback ports by binding port 0. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

const dataDirs: string[] = [];
process.once('exit', () => {
  if (process.env.ZK_KEEP_DATA) return;
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function makeDataDir(parent = tmpdir()): string {
  const base = join(parent, 'nestjs-zk-lock-tests');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'zk-'));
  dataDirs.push(dir);
  return dir;
}

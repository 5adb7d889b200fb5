import type { ZkStat } from '../../zookeeper/native-client.js';
import { ZkLockError } from '../../errors.js';
import { LockService } from '../../service/lock.service.js';
import { checkMs } from '../../shared/durations.js';
import type { ZkLockModuleOptions } from '../../service/zk-lock-options.interface.js';
import { InMemoryConnection, type InMemoryConnectionOptions, type SessionFactory } from './in-memory-connection.js';
import { ZNodeTree } from './znode-tree.js';

/** Options of an InMemoryZooKeeper (the server side; each client has InMemoryConnectionOptions). */
export interface InMemoryZooKeeperOptions {
  /**
   * How long an empty lock parent (a container node) stays before it is reaped, in ms. 0 reaps it
   * right after its last child goes (in a microtask, so fake timers do not hold it up); false never
   * reaps. A real server checks every 60 s by default (the test server every 200 ms).
   * @default 0
   */
  containerReapDelayMs?: number | false;
}

/** Options of a LockService on the in-memory ZooKeeper: ZkLockModule's options, plus the client's. */
export type InMemoryLockServiceOptions = Omit<ZkLockModuleOptions, 'connection' | 'connectionString' | 'clientLogLevel'> &
  InMemoryConnectionOptions;

/** Either a LockService made by this kit, or one of its connections. */
export type InMemoryClient = LockService | InMemoryConnection;

const registry = new WeakMap<LockService, { zookeeper: InMemoryZooKeeper; connection: InMemoryConnection }>();
let instances = 0;

/**
 * One ZooKeeper server in memory, shared by every client connected to it: two LockServices on the
 * same InMemoryZooKeeper contend for the same locks, as two processes on one ensemble do. The real
 * LockService and recipes run on it unchanged, so locks behave as they do on a server (queues,
 * fairness, fencing tokens from zxids, ephemeral nodes dying with their session); only the network
 * is missing, and the faults are played with `expireSession`, `disconnect` and `reconnect`.
 */
export class InMemoryZooKeeper {
  private readonly tree: ZNodeTree;
  private readonly server: SessionFactory;
  private readonly connections = new Set<InMemoryConnection>();
  private readonly services = new Set<LockService>();

  constructor(options: InMemoryZooKeeperOptions = {}) {
    const given = options.containerReapDelayMs ?? undefined; // null counts as absent, as it always has
    const reap = given === false ? false : (checkMs(given, 'containerReapDelayMs', { hint: 'false turns reaping off' }) ?? 0);
    this.tree = new ZNodeTree(reap);
    const name = `in-memory ZooKeeper #${++instances}`;
    let sessions = 0;
    // Shaped like a server's ids (server id in the top byte); unique per InMemoryZooKeeper.
    const base = 0x1000000n << 32n;
    this.server = { name, tree: this.tree, nextSessionId: () => (base + BigInt(++sessions)).toString(16) };
  }

  /** The LockService a kit helper made runs on which InMemoryZooKeeper (undefined for any other). */
  static of(locks: LockService): InMemoryZooKeeper | undefined {
    return registry.get(locks)?.zookeeper;
  }

  /** A new client, not yet connected: give it to ZkLockModule as `connection` (LockService connects it). */
  connect(options: InMemoryConnectionOptions = {}): InMemoryConnection {
    const connection = InMemoryConnection.of(this.server, options);
    this.connections.add(connection);
    return connection;
  }

  /**
   * A LockService with its own client (its own session) on this ZooKeeper, connected and ready.
   * Several of them contend with each other. `close()` shuts them all down.
   */
  async createLockService(options: InMemoryLockServiceOptions = {}): Promise<LockService> {
    const { sessionTimeoutMs, connectTimeoutMs, digest, ...moduleOptions } = options;
    const connection = this.connect({ sessionTimeoutMs, connectTimeoutMs, digest });
    const locks = new LockService({ rootAclCheck: 'off', ...moduleOptions, connection });
    this.adopt(locks, connection);
    await locks.onModuleInit();
    return locks;
  }

  /** Records which client a LockService uses, for expireSession(locks) and the like. */
  adopt(locks: LockService, connection: InMemoryConnection): void {
    registry.set(locks, { zookeeper: this, connection });
    this.services.add(locks);
  }

  /** The client a LockService made by this kit uses. */
  connectionOf(client: InMemoryClient): InMemoryConnection {
    if (client instanceof InMemoryConnection) return client;
    const entry = registry.get(client);
    if (!entry || entry.zookeeper !== this) {
      throw new ZkLockError(
        'This LockService does not run on this InMemoryZooKeeper: make it with createLockService(), createInMemoryLockService() or ZkLockTestingModule.',
      );
    }
    return entry.connection;
  }

  /** Expires the client's session now: its locks go to others and its holders' signals abort with LockLostError. */
  expireSession(client: InMemoryClient): void {
    this.connectionOf(client).expireSession();
  }

  /** Drops the client's connection (state `suspended`); it expires after its session timeout unless reconnected. */
  disconnect(client: InMemoryClient): void {
    this.connectionOf(client).disconnect();
  }

  /** Brings the client's connection back, same session. */
  reconnect(client: InMemoryClient): void {
    this.connectionOf(client).reconnect();
  }

  /** The zxid of the last write (it grows with every write, as a server's does). */
  get zxid(): number {
    return this.tree.zxid;
  }

  exists(path: string): boolean {
    return this.tree.has(path);
  }

  /** A node's children's names, sorted; [] when it does not exist. */
  getChildren(path: string): string[] {
    return this.tree.has(path) ? this.tree.getChildren(SUPER, path).children.sort() : [];
  }

  /** A node's data and Stat; undefined when it does not exist. */
  getData(path: string): { data: Buffer; stat: ZkStat } | undefined {
    return this.tree.has(path) ? this.tree.getData(SUPER, path) : undefined;
  }

  /** Every path at or below `under` (ZooKeeper's own /zookeeper nodes left out), sorted. */
  nodes(under = '/'): string[] {
    return this.tree.paths(under).filter((path) => path !== '/zookeeper' && !path.startsWith('/zookeeper/'));
  }

  /** Paths being watched, each with the number of sessions watching it (a server's `wchp`). */
  watchesByPath(): Map<string, number> {
    return this.tree.watchesByPath();
  }

  /** Shuts down every LockService made here (releasing what they hold), then closes every client. */
  async close(): Promise<void> {
    const services = [...this.services];
    this.services.clear();
    for (const locks of services) {
      await locks.beforeApplicationShutdown();
      await locks.onApplicationShutdown();
    }
    for (const connection of this.connections) connection.close();
    this.connections.clear();
  }
}

/** Reads as a superuser would: the views above ignore ACLs. */
const SUPER = { sessionId: '0', identities: [], superuser: true } as const;

/**
 * A connected LockService on an in-memory ZooKeeper, for unit tests of code that takes locks.
 * Pass `zookeeper` to share one with other services (they then contend), or reach the one made for
 * it with `InMemoryZooKeeper.of(locks)` (to expire its session, look at its nodes, close it).
 */
export function createInMemoryLockService(options: InMemoryLockServiceOptions & { zookeeper?: InMemoryZooKeeper } = {}): Promise<LockService> {
  const { zookeeper = new InMemoryZooKeeper(), ...rest } = options;
  return zookeeper.createLockService(rest);
}

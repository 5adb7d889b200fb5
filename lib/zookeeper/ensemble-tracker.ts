import { parseConnectString, type ResolvedHosts } from './connect-string.js';
import { clientAddressesOf, sameHosts } from './ensemble-config.js';
import type { NativeClient } from './native-client.js';

/** How often the names of the member list are looked up again while the session is disconnected, in ms. */
const RESOLVE_AGAIN_MS = 1000;
const SESSION_EVENT = -1;

/** What the tracker needs of the connection it serves (SessionHandles). */
export interface TrackedConnection {
  /** The handle the session runs on now, if any. */
  readonly client: NativeClient | undefined;
  /** Move the current handle to these addresses (a connect string of addresses, with the chroot, and the names they came from). */
  useAddresses(resolved: ResolvedHosts): void;
  /** Looks a connect string's names up (resolveHosts, with whatever the connection learns from it). */
  resolve(connectString: string): Promise<ResolvedHosts>;
  /** The config read on `client` failed with this result code (the first request of each connection: see SessionHandles). */
  refused?(client: NativeClient, rc: number): void;
}

/**
 * Follows the ensemble as it changes under a connection, as Curator's EnsembleTracker does:
 *
 * - It watches `/zookeeper/config` (one watch per handle, set when it connects: nothing per lock or
 *   request) and, when the members change (dynamic reconfiguration), takes their client addresses as
 *   the member list, keeping the chroot: the current handle is moved to them (the C client's
 *   zoo_set_servers, which keeps the session and moves it only when its server left or to spread the
 *   load), and every later handle starts from them.
 * - While the session is disconnected it looks the member list's names up again every second, off the
 *   event loop (the C client is given addresses only, see connect-string.ts), so that a member
 *   that comes back under the same name at a new address (a Kubernetes pod) is found again.
 */
export class EnsembleTracker {
  /** The member list learned from the config (entries as the config names them); undefined: the configured one. */
  private members: string[] | undefined;
  /** The handle whose config watch is set or being set. */
  private watched: NativeClient | undefined;
  private resolveTimer: NodeJS.Timeout | undefined;
  /** Bumped on each change of the member list and on stop: a late lookup of an older list is dropped. */
  private generation = 0;
  private readonly chroot: string;
  /** The version of the last config read that named every member's client address. */
  configVersion: string | undefined;
  /** Whether the configured list named observers only (decided at the first config read). */
  private observersOnly: boolean | undefined;

  constructor(
    /** The connectionString option (checked). */
    private readonly configured: string,
    private readonly connection: TrackedConnection,
    /** Whether to follow `/zookeeper/config` (the followEnsembleConfig option). */
    private readonly followConfig: boolean,
    /** TLS: only the members' secure client addresses are usable. */
    private readonly secure: boolean,
  ) {
    this.chroot = parseConnectString(configured).chroot;
  }

  /** The member list new handles start from: the config's latest (with the chroot), else the configured one. */
  get connectString(): string {
    return this.members ? this.members.join(',') + this.chroot : this.configured;
  }

  /** The members the tracker uses now, `host:port` as named (no chroot). */
  get hosts(): string[] {
    return this.members ?? parseConnectString(this.configured).hosts.map((h) => h.entry);
  }

  /** A handle connected (first time or again): its config watch is set unless it is already. */
  connected(client: NativeClient): void {
    this.stopResolving();
    if (!this.followConfig || this.watched === client) return;
    this.watch(client);
  }

  /** The session is disconnected: look its members up again until it is back. */
  disconnected(): void {
    if (this.resolveTimer || !this.hosts.some((entry) => !isAddress(entry))) return;
    this.resolveTimer = setInterval(() => this.resolveAgain(), RESOLVE_AGAIN_MS);
    this.resolveTimer.unref();
  }

  stop(): void {
    this.generation++;
    this.watched = undefined;
    this.stopResolving();
  }

  private stopResolving(): void {
    clearInterval(this.resolveTimer);
    this.resolveTimer = undefined;
  }

  private watch(client: NativeClient): void {
    this.watched = client;
    const onEvent = (type: number): void => {
      // A session event leaves the watch in place; a change consumes it: set it again and read.
      if (type === SESSION_EVENT || this.watched !== client) return;
      this.watch(client);
    };
    let sent: number;
    try {
      sent = client.native.aw_getconfig(onEvent, (rc, _message, _stat, data) => {
        if (rc !== 0) {
          // Not set (a lost connection, or a server without /zookeeper/config): set again at the next connect.
          if (this.watched === client) this.watched = undefined;
          this.connection.refused?.(client, rc);
          return;
        }
        if (this.watched === client) this.changed(data?.toString('utf8') ?? '');
      });
    } catch {
      sent = -1;
    }
    if (sent !== 0 && this.watched === client) this.watched = undefined;
  }

  /**
   * A config was read: a new member list is taken when every member names its client address. A
   * client configured with observers only (say, in a remote data centre) follows the observers only.
   */
  private changed(config: string): void {
    const addresses = clientAddressesOf(config, this.secure);
    if (!addresses) return;
    this.configVersion = addresses.version;
    this.observersOnly ??= this.hosts.every((entry) => addresses.observers.includes(entry));
    const hosts = this.observersOnly ? addresses.observers : addresses.hosts;
    if (hosts.length === 0 || sameHosts(hosts, this.hosts)) return;
    // Taken only once its names resolve here: names clients cannot resolve would leave the
    // connection unable to open a new session.
    const generation = ++this.generation;
    this.connection.resolve(hosts.join(',') + this.chroot).then(
      (resolved) => {
        if (generation !== this.generation) return;
        this.members = hosts;
        this.connection.useAddresses(resolved);
      },
      () => undefined, // kept as it was; the next change of the config tries again
    );
  }

  /** Looks the member list up again and gives the addresses to the connection (which ignores an unchanged list). */
  private resolveAgain(): void {
    const generation = this.generation;
    this.connection.resolve(this.connectString).then(
      (resolved) => {
        if (generation === this.generation) this.connection.useAddresses(resolved);
      },
      () => undefined, // a name does not resolve now: the next lookup (or reconnect) tries again
    );
  }
}

function isAddress(entry: string): boolean {
  const host = entry.slice(0, entry.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');
  return /^[\d.]+$/.test(host) || host.includes(':');
}

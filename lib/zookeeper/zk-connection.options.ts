import { InvalidOptionsError } from '../errors.js';
import { checkMs } from '../shared/durations.js';
import { type KnownKeys, refuseUnknownKeys } from '../shared/known-keys.js';
import type { ClientLogLevel } from './native-client.js';
import type { ZkSaslOptions } from './zk-sasl.options.js';
import type { ZkTlsOptions } from './zk-tls.options.js';

/** Options of one ZooKeeper connection. */
export interface ZkConnectionOptions {
  /**
   * Comma-separated `host:port` list, optionally followed by a chroot path: `zk1:2181,zk2:2181/app`.
   * In ZkLockModule, not needed when `connection` is given (the connection options below then do not
   * apply either: they configure the connection the module opens).
   */
  connectionString: string;
  /**
   * Session timeout requested from the server, in ms; the server clamps it to its own
   * min/max (by default 2 and 20 ticks). Held locks are declared lost after this long disconnected.
   * A whole number from 100 to 1073741823.
   * @default 15000
   */
  sessionTimeoutMs?: number;
  /**
   * How much of the session timeout a holder gives up to be told of a lost lock before ZooKeeper
   * can have granted it to someone else, in ms. A holder's lease runs until the send time of its
   * session's latest answered request plus the session timeout less this margin; when it runs out
   * (no answer for that long: a partition, a stalled or dead server), every lock of the session is
   * declared lost and the session is ended. It must cover how late an ensemble's leader may hear of
   * the session: `syncLimit × tickTime + tickTime / 2`, plus a little for clock rates and timers
   * (a follower cut off from its leader answers for up to syncLimit ticks). The default covers
   * ZooKeeper's sample configuration (tickTime 2000, syncLimit 5) from a 15 s session timeout up,
   * and any ensemble whose `syncLimit × tickTime` is at most half the session timeout. A standalone
   * server needs only the little: its own answers prove the session alive. At most nine tenths of
   * the session timeout. While a lock is held or waited for, the lease is renewed by any answer,
   * the C client's pings included, and by a read of its own when nothing was answered for a quarter
   * of the lease (and on reconnecting, when one was lost with the connection); with a margin under a
   * third of the session timeout the pings (every third of it) suffice, the read waits half the
   * lease, and none is sent.
   * @default three quarters of the negotiated session timeout
   */
  leaseMarginMs?: number;
  /**
   * How long `connect()` waits for the first session before failing, in ms.
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * What the C client prints to stderr (it cannot be routed to a logger). Process-wide: the last
   * connection opened sets it for all.
   * @default 'off'
   */
  clientLogLevel?: ClientLogLevel;
  /**
   * Digest credential, `user:password`, added to every session this connection opens (before any
   * other request). With it, the lock paths this library creates get an ACL that lets only this
   * identity create and delete lock nodes (everyone may read). ZooKeeper sends it in clear text:
   * use it on a trusted network or through a TLS tunnel.
   * @default undefined (no identity: lock paths are created open)
   */
  digest?: string;
  /**
   * TLS to the servers' `secureClientPort`: PEM file paths (no commas), checked at construction
   * (readable, parseable, key matching cert, passphrase right) with InvalidOptionsError. Start-up
   * fails with ZkTlsError, within connectTimeoutMs, when a server's certificate is not signed by
   * `ca` or does not name the host it was reached by (see `verifyHostname`), a server refuses the
   * client, or the port does not speak TLS (and, without this option, when the port speaks TLS
   * only). Needs an addon built with TLS (the default build); without one, a connection with `tls`
   * fails with ZkNativeAddonError saying why.
   * @default undefined (plain TCP)
   */
  tls?: ZkTlsOptions;
  /**
   * SASL authentication: `{ mechanism: 'DIGEST-MD5', username, password }` (a user of the servers'
   * JAAS Server section) or `{ mechanism: 'GSSAPI', principal, keytab?, serviceName?, serviceHost? }`
   * (Kerberos, with the machine's MIT Kerberos library). Done before the session counts as
   * connected, and again on every reconnect and new session. With it, the lock paths this library
   * creates get an ACL that lets only this identity (and `digest`'s, when both are set) create and
   * delete lock nodes (everyone may read). Start-up fails with ZkSaslError, within
   * connectTimeoutMs, when the server refuses the credentials, or, without this option, when the
   * server requires SASL.
   * @default undefined (no SASL)
   */
  sasl?: ZkSaslOptions;
  /**
   * Follow the ensemble's own member list: watch `/zookeeper/config` (one watch per session) and,
   * when members are added or removed (dynamic reconfiguration, ZooKeeper 3.5+), move the session to
   * the client addresses the config names, keeping the chroot, so that sessions and their locks
   * survive the change and later sessions use the new list. A config that names no client address
   * for some member (its client port set in zoo.cfg only) is ignored. With `tls`, only secure client
   * addresses (published by ZooKeeper 3.9+) are taken. Turn it off when the addresses in the config
   * are not the ones clients can reach: clients behind NAT, a proxy or a load balancer, or servers
   * named by in-cluster names that clients resolve differently.
   * @default true
   */
  followEnsembleConfig?: boolean;
}

/** Every name of ZkConnectionOptions (a field added above and not here fails to compile). */
export const CONNECTION_OPTION_KEYS = {
  connectionString: true,
  sessionTimeoutMs: true,
  leaseMarginMs: true,
  connectTimeoutMs: true,
  clientLogLevel: true,
  digest: true,
  tls: true,
  followEnsembleConfig: true,
  sasl: true,
} as const satisfies KnownKeys<ZkConnectionOptions>;

/**
 * The connection's options out of a larger object (ZkLockModule's), and so never a name the
 * connection does not know.
 */
export function pickConnectionOptions(options: Partial<ZkConnectionOptions>): ZkConnectionOptions {
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(CONNECTION_OPTION_KEYS) as (keyof ZkConnectionOptions)[]) {
    if (name in options) picked[name] = options[name];
  }
  return picked as unknown as ZkConnectionOptions;
}

/** Refuses options with a name ZkConnectionOptions does not have. @throws InvalidOptionsError naming it. */
export function refuseUnknownConnectionOptions(options: object): void {
  refuseUnknownKeys(options, CONNECTION_OPTION_KEYS, 'a ZkConnection option');
}

/** The defaults of sessionTimeoutMs and connectTimeoutMs (the in-memory connection's too). */
export const DEFAULT_SESSION_TIMEOUT_MS = 15_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** The default lease margin, as a share of the negotiated session timeout. */
export const DEFAULT_LEASE_MARGIN_SHARE = 0.75;
/** The shortest lease allowed, as a share of the session timeout: shorter, every lock would be lost at the first hiccup. */
const MIN_LEASE_SHARE = 0.1;
/**
 * Session timeouts the C client can work with. It gives a connect attempt two thirds of the timeout
 * asked for (at 1 ms it never connects; a server grants at least 2 ticks anyway), and doubles it in
 * an int (from 2^30 ms it never connects either).
 */
const MIN_SESSION_TIMEOUT_MS = 100;
const MAX_SESSION_TIMEOUT_MS = 2 ** 30 - 1;

/** sessionTimeoutMs, checked, or its default. */
export function checkSessionTimeout(value: unknown): number {
  const hint =
    'the ZooKeeper C client cannot connect outside that range, and the server grants a timeout between its own ' +
    'min and max anyway (by default 2 and 20 ticks)';
  const range = { min: MIN_SESSION_TIMEOUT_MS, max: MAX_SESSION_TIMEOUT_MS, whole: true, hint };
  return checkMs(value, 'sessionTimeoutMs', range) ?? DEFAULT_SESSION_TIMEOUT_MS;
}

/** leaseMarginMs, checked against the session timeout asked for; undefined: the default share of each session's. */
export function checkLeaseMargin(value: unknown, sessionTimeoutMs: number): number | undefined {
  const max = sessionTimeoutMs * (1 - MIN_LEASE_SHARE);
  return checkMs(value, 'leaseMarginMs', {
    max,
    maxLabel: `nine tenths of sessionTimeoutMs (${Math.floor(max)})`,
    hint: 'set it to syncLimit × tickTime + tickTime / 2 of your ensemble plus a little, and sessionTimeoutMs comfortably above that',
  });
}

/**
 * The error for a lease margin that leaves too short a lease of the session timeout the server
 * granted (it may grant less than was asked), or undefined when the margin fits.
 */
export function grantedLeaseError(leaseMarginMs: number | undefined, grantedMs: number, askedMs: number): InvalidOptionsError | undefined {
  if (leaseMarginMs === undefined || grantedMs - leaseMarginMs >= grantedMs * MIN_LEASE_SHARE) return undefined;
  return new InvalidOptionsError(
    'leaseMarginMs',
    `${leaseMarginMs} ms leaves less than a tenth of the session timeout the server granted (${grantedMs} ms, asked ${askedMs} ms) ` +
      `as a lease: lower leaseMarginMs to at most ${Math.floor(grantedMs * (1 - MIN_LEASE_SHARE))}, or let the server grant a longer session (its maxSessionTimeout)`,
  );
}

/**
 * The ensemble's configuration as ZooKeeper publishes it in `/zookeeper/config` (3.5+), read for the
 * addresses clients connect to. One line per member,
 * `server.<id>=<host>:<quorumPort>:<electionPort>[|<host>:...][:<role>][;[<clientHost>:]<clientPort>[;<secureHost>:<securePort>]]`,
 * then `version=<hex>`. Pure parsing: the tracker (ensemble-tracker.ts) acts on it.
 */

/** The client addresses a configuration names, and its version. */
export interface EnsembleAddresses {
  /** `host:port` entries, one per member (participants and observers), in the config's order. */
  readonly hosts: string[];
  /** Those of the observers. */
  readonly observers: string[];
  /** The config's `version` line (hex), '' when absent. */
  readonly version: string;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0', '[0:0:0:0:0:0:0:0]']);

/**
 * The client addresses of every member of `config` (the data of `/zookeeper/config`), or undefined
 * when some member names none (a server whose client port is set only in its static zoo.cfg is
 * published without one): the client then keeps the list it has rather than drop that member.
 * With `secure`, the members' secure client addresses (published by ZooKeeper 3.9+ only), since a TLS
 * client cannot use the plain port.
 */
export function clientAddressesOf(config: string, secure = false): EnsembleAddresses | undefined {
  const hosts: string[] = [];
  const observers: string[] = [];
  let version = '';
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('version=')) version = line.slice('version='.length);
    if (!/^server\.\d+=/.test(line)) continue;
    const entry = clientEntryOf(line.slice(line.indexOf('=') + 1), secure);
    if (entry === undefined) return undefined;
    hosts.push(entry);
    if (/:observer\s*(;|$)/.test(line)) observers.push(entry);
  }
  return hosts.length === 0 ? undefined : { hosts, observers, version };
}

/** A member's client `host:port` from the right side of its `server.N=` line. */
function clientEntryOf(spec: string, secure: boolean): string | undefined {
  const parts = spec.split(';');
  const client = (secure ? parts[2] : parts[1])?.trim();
  if (!client) return undefined;
  const colon = client.lastIndexOf(':');
  // `;2181` alone: the port, on every address of the server.
  const host = colon < 0 ? '' : client.slice(0, colon);
  const port = colon < 0 ? client : client.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port)) return undefined;
  // A wildcard client address (every interface): clients reach the server at its quorum host, as
  // Curator's EnsembleTracker does.
  const reachable = host === '' || WILDCARDS.has(host) ? quorumHostOf(parts[0]!) : host;
  return reachable === undefined ? undefined : `${reachable}:${port}`;
}

/** The host of a member's first quorum address (`host:q:e[|...][:role]`), brackets kept for IPv6. */
function quorumHostOf(quorum: string): string | undefined {
  const first = quorum.split('|')[0]!.trim();
  const bracketed = /^(\[[^\]]+\]):/.exec(first);
  if (bracketed) return bracketed[1];
  const host = first.split(':')[0];
  return host ? host : undefined;
}

/** The same members, whatever the order (a reordered config is no change). */
export function sameHosts(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((host) => set.has(host));
}

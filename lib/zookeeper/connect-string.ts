import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { InvalidOptionsError, shown, ZkConnectionError } from '../errors.js';

/**
 * Connect strings, `host:port,host:port[/chroot]`: checked, parsed (once, here, for everyone),
 * shuffled, and resolved off the event loop.
 */

/** One server of a connect string. */
export interface ConnectHost {
  /** Its name or address, without the brackets around an IPv6 address. */
  readonly host: string;
  readonly port: number;
  /** The entry as written, `host:port`. */
  readonly entry: string;
}

/** A connect string in parts. */
export interface ConnectString {
  readonly hosts: ConnectHost[];
  /** The chroot path, `/app/locks`, or '' without one. */
  readonly chroot: string;
}

const CONNECTION_STRING = /^[^,\s/]+:\d{1,5}(,[^,\s/]+:\d{1,5})*(\/[^\s]*)?$/;

/** Splits a connect string (checked by validateConnectionString, or resolved) into its servers and chroot. */
export function parseConnectString(connectString: string): ConnectString {
  const slash = connectString.indexOf('/');
  const list = slash < 0 ? connectString : connectString.slice(0, slash);
  return {
    hosts: list.split(',').map((entry) => {
      const colon = entry.lastIndexOf(':');
      return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(colon + 1)), entry };
    }),
    chroot: slash < 0 ? '' : connectString.slice(slash),
  };
}

/** The connect string of `host:port` entries, as written, and a chroot ('' for none). */
function formatConnectString(entries: readonly string[], chroot: string): string {
  return entries.join(',') + chroot;
}

/** The connectionString option, trimmed, or InvalidOptionsError. */
export function validateConnectionString(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidOptionsError('connectionString', 'is required: a comma-separated list of host:port, e.g. "127.0.0.1:2181"');
  }
  const trimmed = value.trim();
  if (!CONNECTION_STRING.test(trimmed)) {
    throw new InvalidOptionsError(
      'connectionString',
      `${shown(value)} is not a comma-separated list of host:port (with an optional /chroot at the end)`,
    );
  }
  for (const { entry, port } of parseConnectString(trimmed).hosts) {
    if (port < 1 || port > 65535) {
      throw new InvalidOptionsError('connectionString', `${shown(entry)} has port ${port}: a port is from 1 to 65535`);
    }
  }
  return trimmed;
}

/** The connect string with its `host:port` entries in random order (the chroot stays at the end). */
export function shuffleHosts(connectString: string): string {
  const { hosts, chroot } = parseConnectString(connectString);
  const entries = hosts.map((host) => host.entry);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return formatConnectString(entries, chroot);
}

/** An address of a connect string that came from a host name, and that name. */
export interface ResolvedName {
  readonly address: string;
  readonly port: number;
  /** The host name as connectionString writes it. */
  readonly name: string;
}

/** A connect string with its host names looked up. */
export interface ResolvedHosts {
  /** `address:port` entries (and the chroot): what the C client is given. */
  readonly connect: string;
  /**
   * The name each address of `connect` was looked up from (the first, when two names share one):
   * what a TLS server reached there must hold in its certificate. Addresses written as such are not listed.
   */
  readonly names: readonly ResolvedName[];
}

/** A connect string of addresses only, taken as it is (before any lookup). */
export function unresolved(connectString: string): ResolvedHosts {
  return { connect: connectString, names: [] };
}

/** The name `host:port` of a resolved connect string was reached by: its host name, or the address itself. */
export function reachedAs(resolved: ResolvedHosts, host: string, port: number): string {
  return resolved.names.find((n) => n.address === host && n.port === port)?.name ?? host;
}

/**
 * The connect string with every host name replaced by its addresses, looked up off the event loop.
 * The C client resolves names with a blocking call on the thread that runs JavaScript, on each
 * reconnect: a slow or unreachable DNS server then stalls the whole process, timers included, and
 * with them the lease that must tell a holder in time. Given addresses, it never waits on DNS. Names are looked up again
 * for each new session. Addresses stay as they are; the chroot stays at the end. Each address keeps
 * the name it came from, for TLS host-name checks; `names`, when given, learns it too, by address
 * (Kerberos names servers by name).
 * @throws Error (ENOTFOUND and the like) when a name does not resolve.
 */
export async function resolveHosts(connectionString: string, names?: Map<string, string>): Promise<ResolvedHosts> {
  const { hosts, chroot } = parseConnectString(connectionString);
  const found = await Promise.all(
    hosts.map(async ({ host, port }) => {
      if (isIP(host)) return [{ address: host, port, name: undefined }];
      const addresses = await lookup(host, { all: true });
      for (const { address } of addresses) names?.set(address, host);
      return addresses.map(({ address }) => ({ address, port, name: host }));
    }),
  );
  const entries = new Map<string, string | undefined>();
  const named: ResolvedName[] = [];
  for (const { address, port, name } of found.flat()) {
    // The C client splits an entry at its last colon and gives getaddrinfo what comes before:
    // IPv6 addresses go to it without brackets (`::1:2181`).
    const entry = `${address}:${port}`;
    if (entries.has(entry)) continue; // the first of the names that share an address is expected
    entries.set(entry, name);
    if (name !== undefined) named.push({ address, port, name });
  }
  return { connect: formatConnectString([...entries.keys()], chroot), names: named };
}

/** resolveHosts, as start-up needs it: within the connect timeout, and failing with a ZkConnectionError. */
export async function lookUpWithin(connectionString: string, signal: AbortSignal, timeoutMs: number, names?: Map<string, string>): Promise<ResolvedHosts> {
  const aborted = new Promise<never>((_, reject) => {
    const fail = (): void => reject(new ZkConnectionError(connectionString, `its host names did not resolve within ${timeoutMs} ms`));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  try {
    return await Promise.race([resolveHosts(connectionString, names), aborted]);
  } catch (error) {
    if (error instanceof ZkConnectionError) throw error;
    const code = (error as { code?: string; hostname?: string }).code ?? String(error);
    const host = (error as { hostname?: string }).hostname;
    throw new ZkConnectionError(connectionString, `the host name ${host ? shown(host) : ''} does not resolve (${code})`, { cause: error });
  }
}

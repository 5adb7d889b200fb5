import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * The connect string with every host name replaced by its addresses, looked up off the event loop.
 * The C client resolves names with a blocking call on the thread that runs JavaScript, on each
 * reconnect: a slow or unreachable DNS server then stalls the whole process, timers included, and
 * with them the lease that must tell a holder in time. Given addresses, it never waits on DNS. Names are looked up again
 * for each new session. Addresses stay as they are; the chroot stays at the end.
 * @throws Error (ENOTFOUND and the like) when a name does not resolve.
 */
export async function resolveHosts(connectionString: string): Promise<string> {
  const slash = connectionString.indexOf('/');
  const hosts = (slash < 0 ? connectionString : connectionString.slice(0, slash)).split(',');
  const chroot = slash < 0 ? '' : connectionString.slice(slash);
  const resolved = await Promise.all(
    hosts.map(async (entry) => {
      const colon = entry.lastIndexOf(':');
      const host = entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
      const port = entry.slice(colon + 1);
      if (isIP(host)) return [entry];
      const addresses = await lookup(host, { all: true });
      return addresses.map(({ address, family }) => (family === 6 ? `[${address}]:${port}` : `${address}:${port}`));
    }),
  );
  return [...new Set(resolved.flat())].join(',') + chroot;
}

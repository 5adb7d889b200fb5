import { describe, expect, it } from 'vitest';
import { parseConnectString, reachedAs, resolveHosts, shuffleHosts } from '../../lib/zookeeper/connect-string.js';

describe('shuffleHosts (the C client is told to keep the order it is given)', () => {
  it('keeps every host once and the chroot at the end, and uses every order', () => {
    const orders = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const shuffled = shuffleHosts('a:1,b:2,c:3/app/locks');
      expect(shuffled.endsWith('/app/locks')).toBe(true);
      const hosts = shuffled.slice(0, -'/app/locks'.length).split(',');
      expect([...hosts].sort()).toEqual(['a:1', 'b:2', 'c:3']);
      orders.add(hosts.join(','));
    }
    expect(orders.size).toBe(6); // all 3! orders: each has a chance of 1/6 per draw
  });

  it('leaves a single host, with or without a chroot, as it is', () => {
    expect(shuffleHosts('127.0.0.1:2181')).toBe('127.0.0.1:2181');
    expect(shuffleHosts('127.0.0.1:2181/x')).toBe('127.0.0.1:2181/x');
  });
});

describe('parseConnectString (the one parser: checking, shuffling, resolving and the testing kit use it)', () => {
  it('splits the servers, as written and as host and port, from the chroot', () => {
    expect(parseConnectString('zk1:2181,[::1]:2182,10.0.0.3:2183/app/locks')).toEqual({
      hosts: [
        { host: 'zk1', port: 2181, entry: 'zk1:2181' },
        { host: '::1', port: 2182, entry: '[::1]:2182' },
        { host: '10.0.0.3', port: 2183, entry: '10.0.0.3:2183' },
      ],
      chroot: '/app/locks',
    });
    expect(parseConnectString('127.0.0.1:2181')).toEqual({ hosts: [{ host: '127.0.0.1', port: 2181, entry: '127.0.0.1:2181' }], chroot: '' });
  });
});

describe('resolveHosts (what the C client is given)', () => {
  it('writes IPv6 addresses without brackets, as the C client splits an entry at its last colon', async () => {
    expect(await resolveHosts('[::1]:2181,127.0.0.1:2182/app')).toEqual({ connect: '::1:2181,127.0.0.1:2182/app', names: [] });
    const resolved = await resolveHosts('localhost:2181');
    expect(resolved.connect).not.toMatch(/[[\]]/);
    for (const { host, port } of parseConnectString(resolved.connect).hosts) {
      expect(['127.0.0.1', '::1']).toContain(host);
      expect(port).toBe(2181);
    }
  });

  it('keeps the host name each address came from (for TLS host-name checks); an address written as such is its own name', async () => {
    const resolved = await resolveHosts('localhost:2181,127.0.0.1:2182/app');
    expect(resolved.names.length).toBeGreaterThan(0);
    for (const { address, port, name } of resolved.names) {
      expect(name).toBe('localhost');
      expect(port).toBe(2181);
      expect(reachedAs(resolved, address, port)).toBe('localhost');
    }
    expect(reachedAs(resolved, '127.0.0.1', 2182)).toBe('127.0.0.1');
  });

  it('an address reached by two entries is expected under the first one written', async () => {
    const ipFirst = await resolveHosts('127.0.0.1:2181,localhost:2181');
    expect(ipFirst.connect.split(',').filter((entry) => entry === '127.0.0.1:2181')).toHaveLength(1);
    expect(reachedAs(ipFirst, '127.0.0.1', 2181)).toBe('127.0.0.1');
    const nameFirst = await resolveHosts('localhost:2181,127.0.0.1:2181');
    expect(reachedAs(nameFirst, '127.0.0.1', 2181)).toBe('localhost');
  });
});

import { describe, expect, it } from 'vitest';
import { shuffleHosts } from '../../lib/zookeeper/zk-connection.js';

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

import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../lib/errors.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import type { ZkConnectionOptions } from '../../lib/zookeeper/zk-connection.options.js';

const refused = (options: Partial<ZkConnectionOptions>): InvalidOptionsError => {
  try {
    new ZkConnection({ connectionString: '127.0.0.1:2181', ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error(`accepted ${JSON.stringify(options).slice(0, 100)}`);
};

describe('connection options that can never work fail up front', () => {
  it('session timeouts the C client cannot connect with', () => {
    expect(refused({ sessionTimeoutMs: 1 }).message).toMatch(/sessionTimeoutMs.*from 100 to 1073741823, got 1:/);
    expect(refused({ sessionTimeoutMs: 2 ** 30 }).message).toMatch(/sessionTimeoutMs/);
    expect(refused({ sessionTimeoutMs: 1500.5 }).message).toMatch(/whole number/);
    expect(() => new ZkConnection({ connectionString: '127.0.0.1:2181', sessionTimeoutMs: 2 ** 30 - 1 })).not.toThrow();
  });

  it('ports outside 1 to 65535', () => {
    expect(refused({ connectionString: '127.0.0.1:70000' }).message).toMatch(/"127\.0\.0\.1:70000" has port 70000: a port is from 1 to 65535/);
    expect(refused({ connectionString: 'a:2181,b:0/app' }).message).toMatch(/port 0/);
  });

  it('a lease margin that leaves no lease', () => {
    expect(refused({ sessionTimeoutMs: 4000, leaseMarginMs: 4000 }).message).toMatch(/leaseMarginMs.*nine tenths of sessionTimeoutMs \(3600\)/);
    expect(refused({ leaseMarginMs: -1 }).message).toMatch(/leaseMarginMs/);
    expect(() => new ZkConnection({ connectionString: '127.0.0.1:2181', sessionTimeoutMs: 4000, leaseMarginMs: 0 })).not.toThrow();
  });

  it('echo at most a few hundred characters of what they were given', () => {
    const huge = `${'h'.repeat(10_000)}:2181`;
    const message = refused({ connectionString: `${huge},x` }).message;
    expect(message.length).toBeLessThan(400);
    expect(message).toMatch(/… \(\d+ characters\)/);
    expect(refused({ sessionTimeoutMs: 'x'.repeat(5000) as unknown as number }).message.length).toBeLessThan(500);
  });
});

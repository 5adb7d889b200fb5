import { describe, expect, it } from 'vitest';
import { clientAddressesOf, sameHosts } from '../../lib/zookeeper/ensemble-config.js';

describe("the ensemble config's client addresses", () => {
  it('takes each member’s client address, observers included, and the version', () => {
    const config = [
      'server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181',
      'server.2=zk-2.zk:2888:3888:participant;zk-2.zk:2181',
      'server.3=10.0.0.3:2888:3888:observer;10.0.0.3:2182',
      'version=10000000a',
    ].join('\n');
    expect(clientAddressesOf(config)).toEqual({ hosts: ['10.0.0.1:2181', 'zk-2.zk:2181', '10.0.0.3:2182'], observers: ['10.0.0.3:2182'], version: '10000000a' });
  });

  it('reaches a member listening on every interface (or given a port only) at its quorum host', () => {
    const config = ['server.1=zk-1:2888:3888:participant;0.0.0.0:2181', 'server.2=[fd00::2]:2888:3888;2181', 'server.3=zk-3:2888:3888|zk-3b:2888:3888;[::]:2181'].join('\n');
    expect(clientAddressesOf(config)?.hosts).toEqual(['zk-1:2181', '[fd00::2]:2181', 'zk-3:2181']);
  });

  it('is nothing when a member names no client address (its client port set in zoo.cfg only)', () => {
    expect(clientAddressesOf('server.1=a:1:2:participant;a:2181\nserver.2=b:1:2:participant\nversion=1')).toBeUndefined();
    expect(clientAddressesOf('')).toBeUndefined();
  });

  it('with TLS, takes the secure client addresses, or nothing when the config has none', () => {
    expect(clientAddressesOf('server.1=a:1:2:participant;a:2181;a:2281', true)?.hosts).toEqual(['a:2281']);
    expect(clientAddressesOf('server.1=a:1:2:participant;a:2181', true)).toBeUndefined();
  });

  it('counts a reordered list as the same', () => {
    expect(sameHosts(['a:1', 'b:2'], ['b:2', 'a:1'])).toBe(true);
    expect(sameHosts(['a:1', 'b:2'], ['a:1', 'c:2'])).toBe(false);
    expect(sameHosts(['a:1'], ['a:1', 'b:2'])).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { exclusiveDriver, readDriver, writeDriver } from '../../lib/queue/lock-driver.js';
import { formatToken, handoffToken } from '../../lib/queue/fencing-token.js';
import { nodePrefix, parseEntry, sortQueue } from '../../lib/queue/queue-entry.js';

describe('queue entries', () => {
  it('orders by sequence, not by name, and ignores foreign children', () => {
    const queue = sortQueue(['x-b-1-0000000010', 'x-a-2-0000000002', 'readme', 'x-c-3-0000000007']);
    expect(queue.map((e) => e.sequence)).toEqual([2, 7, 10]);
    expect(queue.map((e) => e.sessionId)).toEqual(['a', 'c', 'b']);
  });

  it('gives every acquire its own prefix carrying the session id', () => {
    const a = nodePrefix('x', '100000511d50000');
    const b = nodePrefix('x', '100000511d50000');
    expect(a).not.toBe(b);
    expect(a.startsWith('x-100000511d50000-')).toBe(true);
    expect(parseEntry(`${a}0000000003`)).toMatchObject({ kind: 'x', sessionId: '100000511d50000', sequence: 3 });
  });
});

describe('exclusive driver', () => {
  const queue = sortQueue(['x-a-1-0000000001', 'x-b-2-0000000002', 'x-c-3-0000000003']);
  it('grants the lowest entry only', () => {
    expect(exclusiveDriver.decide(queue, 0)).toEqual({ granted: true });
  });
  it('makes each waiter watch exactly its predecessor, whose release as holder hands it the lock', () => {
    expect(exclusiveDriver.decide(queue, 1)).toEqual({ granted: false, watch: [queue[0]], grantedByWrite: true });
    expect(exclusiveDriver.decide(queue, 2)).toEqual({ granted: false, watch: [queue[1]], grantedByWrite: true });
  });
});

describe('grant by write (a holder releasing to the entry that watches it)', () => {
  const mixed = sortQueue(['w-a-1-0000000001', 'r-b-2-0000000002', 'r-c-3-0000000003', 'w-d-4-0000000004', 'd-a-5-0000000005', 'w-e-6-0000000006']);
  it('is offered only where a write or exclusive holder leaves nothing in the way', () => {
    // A read behind the last write below it: that write's release lets every such read in.
    expect(readDriver.decide(mixed, 1)).toEqual({ granted: false, watch: [mixed[0]], grantedByWrite: true });
    expect(readDriver.decide(mixed, 2)).toEqual({ granted: false, watch: [mixed[0]], grantedByWrite: true });
    // A write behind a read: a read's release says nothing of the other reads that may hold.
    expect(writeDriver.decide(mixed, 3)).toEqual({ granted: false, watch: [mixed[2]], grantedByWrite: false });
    // A write behind a downgraded read: reads never grant by write.
    expect(writeDriver.decide(mixed, 5)).toEqual({ granted: false, watch: [mixed[4]], grantedByWrite: false });
  });
  it('is not offered to a writer at the head waiting for a downgraded read', () => {
    const queue = sortQueue(['w-a-1-0000000007', 'd-b-2-0000000009']);
    expect(writeDriver.decide(queue, 0)).toEqual({ granted: false, watch: [queue[1]] });
  });
});

describe('fencing tokens', () => {
  it('compare the same way as strings and as BigInts: by queue, then by place in it', () => {
    const grants: [number, number][] = [
      [9, 0],
      [9, 1],
      [9, 2_147_483_647],
      [10, 0],
      [4294967296, 5],
      [4294967297, 3],
      [2 ** 52 + 5, 0],
    ];
    const tokens = grants.map(([queueZxid, sequence]) => formatToken({ epoch: 0, queueZxid, sequence }));
    expect(tokens.every((t) => t.length === 40)).toBe(true);
    expect([...tokens].reverse().sort()).toEqual(tokens);
    expect(tokens.map((t) => BigInt(t))).toEqual(grants.map(([z, s]) => (BigInt(z) * 10_000_000_000n + BigInt(s)) * 1_000_000n));
  });
  it('grow with each holder of one grant, and every token of a later grant is higher', () => {
    const grant = formatToken({ epoch: 0, queueZxid: 4294967296, sequence: 41 });
    const handed = [1, 2, 999_999].map((n) => handoffToken(grant, n));
    const next = formatToken({ epoch: 0, queueZxid: 4294967296, sequence: 42 });
    const all = [grant, ...handed, next];
    expect([...all].reverse().sort()).toEqual(all);
    expect(all.map((t) => BigInt(t))).toEqual([...all].map((t) => BigInt(t)).sort((a, b) => (a < b ? -1 : 1)));
    expect(handed[2]).toBe('0000000000000042949672960000000041999999');
  });
  it('of a raised epoch are higher than every token of the epochs before, whatever the zxid', () => {
    const before = formatToken({ epoch: 0, queueZxid: 2 ** 52, sequence: 2_147_483_647, handoff: 999_999 });
    const after = formatToken({ epoch: 1, queueZxid: 5, sequence: 0 });
    expect(after > before).toBe(true);
    expect(BigInt(after) > BigInt(before)).toBe(true);
    expect(after.slice(0, 4)).toBe('0001');
  });
});

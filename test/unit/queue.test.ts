import { describe, expect, it } from 'vitest';
import { exclusiveDriver } from '../../lib/recipes/lock-driver.js';
import { formatToken, handoffToken } from '../../lib/recipes/session-retry.js';
import { nodePrefix, parseEntry, sortQueue } from '../../lib/recipes/queue-entry.js';

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
  it('makes each waiter watch exactly its predecessor', () => {
    expect(exclusiveDriver.decide(queue, 1)).toEqual({ granted: false, watch: [queue[0]] });
    expect(exclusiveDriver.decide(queue, 2)).toEqual({ granted: false, watch: [queue[1]] });
  });
});

describe('fencing tokens', () => {
  it('compare the same way as strings and as BigInts', () => {
    const zxids = [0, 9, 10, 4294967296, 4294967297, 2 ** 52 + 5];
    const tokens = zxids.map((zxid) => formatToken(zxid));
    expect(tokens.every((t) => t.length === 26)).toBe(true);
    expect([...tokens].reverse().sort()).toEqual(tokens);
    expect(tokens.map((t) => BigInt(t))).toEqual(zxids.map((z) => BigInt(z) * 1_000_000n));
  });
  it('grow with each holder of one grant, and every token of a later grant is higher', () => {
    const grant = formatToken(4294967296);
    const handed = [1, 2, 999_999].map((n) => handoffToken(grant, n));
    const next = formatToken(4294967297);
    const all = [grant, ...handed, next];
    expect([...all].reverse().sort()).toEqual(all);
    expect(all.map((t) => BigInt(t))).toEqual([...all].map((t) => BigInt(t)).sort((a, b) => (a < b ? -1 : 1)));
    expect(handed[2]).toBe('00000000004294967296999999');
  });
});

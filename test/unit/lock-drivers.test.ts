import { describe, expect, it } from 'vitest';
import {
  downgradeReadDriver,
  exclusiveDriver,
  IncompatibleQueueError,
  readDriver,
  semaphoreDriver,
  writeDriver,
} from '../../lib/recipes/lock-driver.js';
import { nodePrefix, parseEntry, sortQueue } from '../../lib/recipes/queue-entry.js';

/** A queue from kind letters, in order: 'wrrw' is write, read, read, write. */
function queueOf(kinds: string, permits = ''): ReturnType<typeof sortQueue> {
  return sortQueue([...kinds].map((kind, i) => `${kind}${kind === 's' ? permits : ''}-a${i}-1-${String(i + 1).padStart(10, '0')}`));
}
const watched = (decision: ReturnType<typeof readDriver.decide>): string[] =>
  decision.granted ? [] : decision.watch.map((entry) => entry.kind + entry.sequence);

describe('read/write drivers', () => {
  it('grants a read when no write is below it, and makes it watch only the last write below it', () => {
    const queue = queueOf('rrwrrw');
    expect(readDriver.decide(queue, 0).granted).toBe(true);
    expect(readDriver.decide(queue, 1).granted).toBe(true);
    expect(watched(readDriver.decide(queue, 3))).toEqual(['w3']);
    expect(watched(readDriver.decide(queue, 4))).toEqual(['w3']);
  });

  it('grants a write only at the head, and makes it watch the node just below it', () => {
    const queue = queueOf('rrwrrw');
    expect(watched(writeDriver.decide(queue, 2))).toEqual(['r2']);
    expect(watched(writeDriver.decide(queue, 5))).toEqual(['r5']);
    expect(writeDriver.decide(queueOf('wr'), 0).granted).toBe(true);
  });

  it('treats exclusive entries as writes, so both kinds exclude each other and readers', () => {
    const queue = queueOf('xrw');
    expect(watched(readDriver.decide(queue, 1))).toEqual(['x1']);
    expect(watched(writeDriver.decide(queue, 2))).toEqual(['r2']);
    expect(watched(exclusiveDriver.decide(queueOf('wx'), 1))).toEqual(['w1']);
  });

  it('keeps a later writer waiting for a downgraded read, while readers pass it', () => {
    // The write at the head was released; its holder keeps the downgraded read 'd' (sequence 3).
    const queue = queueOf('wrd').slice(1);
    expect(readDriver.decide(queue, 0).granted).toBe(true);
    expect(downgradeReadDriver.decide(queue, 1).granted).toBe(true);
    const writerAtHead = queueOf('wdr');
    expect(watched(writeDriver.decide([writerAtHead[0]!, writerAtHead[1]!], 0))).toEqual(['d2']);
  });

  it('refuses to share a queue with a semaphore', () => {
    expect(() => readDriver.decide(queueOf('s', '3'), 0)).toThrow(IncompatibleQueueError);
    expect(() => exclusiveDriver.decide(queueOf('xs', '3'), 0)).toThrow(/semaphore/);
  });
});

describe('semaphore driver', () => {
  const three = semaphoreDriver(3);
  it('grants the first `permits` entries', () => {
    const queue = queueOf('sssss', '3');
    expect([0, 1, 2, 3, 4].map((i) => three.decide(queue, i).granted)).toEqual([true, true, true, false, false]);
  });

  it('makes the first waiter watch every holder, and later waiters only the waiter before them', () => {
    const queue = queueOf('ssssss', '3');
    expect(watched(three.decide(queue, 3))).toEqual(['s1', 's2', 's3']);
    expect(watched(three.decide(queue, 4))).toEqual(['s4']);
    expect(three.decide(queue, 5)).toMatchObject({ granted: false, pokable: true });
  });

  it('asks a new holder to poke the entry after it only when there is one', () => {
    expect(three.decide(queueOf('ss', '3'), 1)).toEqual({ granted: true, wakeNext: false });
    expect(three.decide(queueOf('ssss', '3'), 2)).toEqual({ granted: true, wakeNext: true });
  });

  it('refuses holders that disagree about the permits, and locks in the same queue', () => {
    expect(() => three.decide(queueOf('ss', '2'), 1)).toThrow(/3 permits .* uses 2/);
    expect(() => three.decide(queueOf('x'), 0)).toThrow(/lock/);
  });

  it('writes its permits into the node name', () => {
    const prefix = nodePrefix('s', 'abc', 7);
    expect(prefix.startsWith('s7-abc-')).toBe(true);
    expect(parseEntry(`${prefix}0000000009`)).toMatchObject({ kind: 's', permits: 7, sequence: 9 });
  });
});

import { describe, expect, it } from 'vitest';
import {
  downgradeReadDriver,
  electionDriver,
  exclusiveDriver,
  type LockDriver,
  readDriver,
  revocableExclusiveDriver,
  revocableWriteDriver,
  semaphoreDriver,
  writeDriver,
} from '../../lib/queue/lock-driver.js';
import {
  curatorDowngradeDriver,
  curatorLatchDriver,
  curatorMutexDriver,
  curatorReadDriver,
  curatorWriteDriver,
  kazooLockDriver,
  kazooReadDriver,
  kazooWriteDriver,
} from '../../lib/queue/foreign-drivers.js';
import { parseEntry, sortQueue } from '../../lib/queue/queue-entry.js';
import { QueueConflictError } from '../../lib/zookeeper/zk-errors.js';

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

  it('keeps a writer at the head waiting for a downgraded read, while readers pass it', () => {
    // w1 was released by its holder, who keeps the downgraded read d4; w2 queued before the downgrade.
    const queue = queueOf('wwrd').slice(1); // w2, r3, d4
    expect(watched(writeDriver.decide(queue, 0))).toEqual(['d4']);
    expect(watched(readDriver.decide(queue, 1))).toEqual(['w2']); // r3 came after w2: it waits (FIFO)
    expect(downgradeReadDriver.decide(queue, 2).granted).toBe(true);
    const readersFirst = queueOf('wrd').slice(1); // r2, d3: no writer left, the reader holds beside d3
    expect(readDriver.decide(readersFirst, 0).granted).toBe(true);
    expect(watched(exclusiveDriver.decide(queueOf('xd').slice(0), 0))).toEqual(['d2']);
  });

  it('refuses to share a queue with a semaphore', () => {
    expect(() => readDriver.decide(queueOf('sr', '3'), 1)).toThrow(QueueConflictError);
    expect(() => exclusiveDriver.decide(queueOf('sx', '3'), 1)).toThrow(/semaphore/);
    // A newer entry of another kind is the newcomer's mistake: it does not fail the entries before it.
    expect(readDriver.decide(queueOf('rs', '3'), 0).granted).toBe(true);
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
    expect(() => three.decide(queueOf('xs', '3'), 1)).toThrow(/lock/);
    expect(three.decide(queueOf('ss', '3').concat(queueOf('ss', '2').slice(1)), 0).granted).toBe(true);
  });

  it('writes its permits into the node name', () => {
    const prefix = semaphoreDriver(7).prefix('abc');
    expect(prefix.startsWith('s7-abc-')).toBe(true);
    expect(parseEntry(`${prefix}0000000009`)).toMatchObject({ kind: 's', permits: 7, sequence: 9 });
  });
});

describe('election driver', () => {
  it('lets the head lead and makes every other participant watch only the one just before it; it never grants by write', () => {
    const queue = queueOf('eee');
    expect(electionDriver.decide(queue, 0)).toEqual({ granted: true });
    expect(electionDriver.decide(queue, 1)).toEqual({ granted: false, watch: [queue[0]] });
    expect(watched(electionDriver.decide(queue, 2))).toEqual(['e2']);
    expect(electionDriver).toMatchObject({ kind: 'e', layout: 'nestjs-zk-lock', grantsByWrite: false });
    expect(parseEntry(`${electionDriver.prefix('abc')}0000000004`)).toMatchObject({ kind: 'e', sequence: 4 });
  });

  it('refuses a lock or a semaphore below a participant, and a lock or semaphore refuses a participant below it', () => {
    expect(() => electionDriver.decide(queueOf('xe'), 1)).toThrow(QueueConflictError);
    expect(() => electionDriver.decide(queueOf('xe'), 1)).toThrow(/in use as a lock \(node x-a0-1-0000000001\); a name is either an election or a lock/);
    expect(() => electionDriver.decide(queueOf('we'), 1)).toThrow(/in use as a lock/);
    expect(() => electionDriver.decide(queueOf('re'), 1)).toThrow(/in use as a lock/);
    expect(() => electionDriver.decide(queueOf('se', '3'), 1)).toThrow(/in use as a semaphore/);
    expect(() => exclusiveDriver.decide(queueOf('ex'), 1)).toThrow(/in use as a leader election \(node e-a0-1-0000000001\)/);
    expect(() => writeDriver.decide(queueOf('ew'), 1)).toThrow(/in use as a leader election/);
    expect(() => readDriver.decide(queueOf('er'), 1)).toThrow(/in use as a leader election/);
    expect(() => semaphoreDriver(3).decide(queueOf('es', '3'), 1)).toThrow(/in use as a leader election/);
    // The advice names the way out on each side.
    const advice = (decide: () => unknown) => {
      try {
        decide();
      } catch (error) {
        return (error as QueueConflictError).advice;
      }
    };
    expect(advice(() => exclusiveDriver.decide(queueOf('ex'), 1))).toMatch(/LockService\.elect, @Leader/);
    expect(advice(() => electionDriver.decide(queueOf('xe'), 1))).toMatch(/another group name/);
    // A newer entry of another kind is the newcomer's mistake: the leader keeps leading.
    expect(electionDriver.decide(queueOf('ex'), 0).granted).toBe(true);
    expect(exclusiveDriver.decide(queueOf('xe'), 0).granted).toBe(true);
  });
});

describe('an entry alone in its queue', () => {
  const drivers: Record<string, LockDriver> = {
    exclusiveDriver,
    writeDriver,
    readDriver,
    downgradeReadDriver,
    revocableExclusiveDriver,
    revocableWriteDriver,
    electionDriver,
    'semaphoreDriver(1)': semaphoreDriver(1),
    'semaphoreDriver(3)': semaphoreDriver(3),
    curatorMutexDriver,
    curatorLatchDriver,
    curatorWriteDriver,
    curatorReadDriver,
    "curatorDowngradeDriver('0000000007')": curatorDowngradeDriver('0000000007'),
    kazooLockDriver,
    kazooWriteDriver,
    kazooReadDriver,
  };
  /** A node the driver itself names, as ZooKeeper completes it. */
  const nameFrom = (driver: LockDriver): string => driver.prefix('100000511d50000') + (driver.createMode === 'EPHEMERAL' ? '' : '0000000042');

  // The queue waiter grants a listing of its own node alone without asking the driver (queue-waiter.ts).
  it.each(Object.keys(drivers))('is granted by %s, with no one to wake', (key) => {
    const driver = drivers[key]!;
    const queue = driver.order([nameFrom(driver)]);
    expect(queue).toHaveLength(1);
    expect(driver.decide(queue, 0)).toMatchObject({ granted: true });
    expect(driver.decide(queue, 0)).not.toMatchObject({ wakeNext: true });
  });

  it('is the only case of that shortcut: with an entry before it, an exclusive entry waits (the check can fail)', () => {
    const queue = exclusiveDriver.order([nameFrom(exclusiveDriver), 'x-200000511d50000-1-0000000041']);
    expect(exclusiveDriver.decide(queue, 1)).toMatchObject({ granted: false });
  });
});

import { describe, expect, it } from 'vitest';
import {
  curatorLatchDriver,
  curatorMutexDriver,
  curatorReadDriver,
  curatorSortKey,
  curatorWriteDriver,
  kazooLockDriver,
  kazooReadDriver,
  kazooWriteDriver,
} from '../../lib/queue/foreign-drivers.js';
import { exclusiveDriver } from '../../lib/queue/lock-driver.js';
import { styleOf } from '../../lib/queue/layouts.js';
import { QueueConflictError } from '../../lib/zookeeper/zk-errors.js';

/** Sort and hold rules of the foreign layouts, from Curator's and kazoo's sources and tests. */
describe('Curator and kazoo drivers: names, order, who holds', () => {
  const uuid = '8eb63f3c-8f33-4b5e-9f8c-0123456789ab';

  it("sorts by Curator's fixForSorting: the text after the last lock name, or the whole name", () => {
    expect(curatorSortKey(`_c_${uuid}-lock-0000000031`, 'lock-')).toBe('0000000031');
    expect(curatorSortKey('lock-lock-0000000002', 'lock-')).toBe('0000000002');
    expect(curatorSortKey('leases', 'lock-')).toBe('leases');
    // A kazoo default node has no "lock-": Curator sorts it by its whole name, after every sequence.
    const order = curatorMutexDriver.order([`_c_${uuid}-lock-0000000009`, `lock-0000000003`, 'zz-stranger']).map((e) => e.name);
    expect(order).toEqual(['lock-0000000003', `_c_${uuid}-lock-0000000009`, 'zz-stranger']);
  });

  it("Curator's mutex: index 0 holds, every child counts (a stranger sorting first blocks, as in Curator), others watch the one before", () => {
    const queue = curatorMutexDriver.order([`_c_${uuid}-lock-0000000002`, `_c_${uuid}-lock-0000000001`, '0-stranger']);
    expect(queue.map((e) => e.name)[0]).toBe('0-stranger');
    expect(curatorMutexDriver.decide(queue, 0)).toEqual({ granted: true });
    expect(curatorMutexDriver.decide(queue, 2)).toEqual({ granted: false, watch: [queue[1]] });
    expect(curatorMutexDriver.grantsByWrite).toBe(false);
    expect(curatorMutexDriver.prefix('1')).toMatch(/^_c_[0-9a-f-]{36}-lock-$/);
  });

  it("Curator's read/write lock: __READ__ and __WRIT__ sorted together; a writer holds first of all, a reader before the first writer", () => {
    const names = [`_c_${uuid}-__WRIT__0000000002`, `_c_${uuid}-__READ__0000000001`, `_c_${uuid}-__READ__0000000003`];
    const queue = curatorReadDriver.order(names);
    expect(queue.map((e) => e.name.slice(-18))).toEqual(['__READ__0000000001', '__WRIT__0000000002', '__READ__0000000003']);
    expect(curatorReadDriver.decide(queue, 0)).toEqual({ granted: true });
    expect(curatorReadDriver.decide(queue, 2)).toEqual({ granted: false, watch: [queue[1]] });
    expect(curatorWriteDriver.decide(queue, 1)).toEqual({ granted: false, watch: [queue[0]] });
  });

  it("kazoo: contenders by their __lock__/__rlock__ sequence; a Lock does not see readers, a WriteLock does, a ReadLock waits only for __lock__ nodes below it", () => {
    const hex = 'a'.repeat(32);
    const names = [`${hex}__rlock__0000000001`, `${hex}__lock__0000000002`, 'lease_holder', `${hex}__rlock__0000000003`];
    expect(kazooLockDriver.order(names).map((e) => e.name.slice(32))).toEqual(['__lock__0000000002']);
    const all = kazooWriteDriver.order(names);
    expect(all.map((e) => e.name.slice(32))).toEqual(['__rlock__0000000001', '__lock__0000000002', '__rlock__0000000003']);
    expect(kazooWriteDriver.decide(all, 1)).toEqual({ granted: false, watch: [all[0]] });
    expect(kazooReadDriver.decide(all, 0)).toEqual({ granted: true });
    expect(kazooReadDriver.decide(all, 2)).toEqual({ granted: false, watch: [all[1]] });
    expect(kazooLockDriver.prefix('1')).toMatch(/^[0-9a-f]{32}__lock__$/);
    expect(kazooReadDriver.prefix('1')).toMatch(/^[0-9a-f]{32}__rlock__$/);
  });

  it("Curator's LeaderLatch: latch names sorted by the text after `latch-`, index 0 leads, the others watch the one before", () => {
    const latch = (n: number, id = uuid) => `_c_${id}-latch-${String(n).padStart(10, '0')}`;
    const other = 'ffffffff-0000-4000-8000-000000000000';
    const queue = curatorLatchDriver.order([latch(12), latch(3, other), latch(7)]);
    expect(queue.map((e) => e.name)).toEqual([latch(3, other), latch(7), latch(12)]);
    expect(queue.map((e) => [e.kind, e.sequence])).toEqual([['e', 3], ['e', 7], ['e', 12]]);
    expect(curatorSortKey(latch(3), 'latch-')).toBe('0000000003');
    expect(curatorLatchDriver.decide(queue, 0)).toEqual({ granted: true });
    expect(curatorLatchDriver.decide(queue, 2)).toEqual({ granted: false, watch: [queue[1]] });
    expect(curatorLatchDriver).toMatchObject({ layout: 'curator', kind: 'e', grantsByWrite: false });
    expect(curatorLatchDriver.prefix('1')).toMatch(/^_c_[0-9a-f-]{36}-latch-$/);
    expect(styleOf(latch(1))).toBe('curator-latch');
  });

  it("Curator's LeaderLatch refuses a mutex's or read/write lock's nodes on its path, and they refuse its, naming the LeaderLatch", () => {
    const latch = `_c_${uuid}-latch-0000000001`;
    const mutex = `_c_${uuid}-lock-0000000002`;
    const write = `_c_${uuid}-__WRIT__0000000002`;
    const read = `_c_${uuid}-__READ__0000000003`;
    for (const node of [mutex, write, read]) {
      expect(() => curatorLatchDriver.order([latch, node])).toThrow(QueueConflictError);
      expect(() => curatorLatchDriver.order([latch, node])).toThrow(/which do not exclude this election's/);
    }
    const refused = (() => {
      try {
        curatorLatchDriver.order([latch, mutex]);
      } catch (error) {
        return error as QueueConflictError;
      }
    })();
    expect(refused?.detail).toMatch(/InterProcessMutex/);
    expect(refused?.advice).toMatch(/either a LeaderLatch election or a lock/);
    expect(() => curatorMutexDriver.order([mutex, latch])).toThrow(/Curator's LeaderLatch \(an election/);
    expect(() => curatorReadDriver.order([read, latch])).toThrow(/Curator's LeaderLatch/);
    expect(() => kazooLockDriver.order([`${'b'.repeat(32)}__lock__0000000001`, latch])).toThrow(/Curator's LeaderLatch/);
    expect(() => exclusiveDriver.order([`x-100000511d50000-3-0000000042`, latch])).toThrow(/Curator's LeaderLatch/);
  });

  it("refuses another layout's nodes, in each layout, and knows each client's names", () => {
    const own = 'x-100000511d50000-3-0000000042';
    const curator = `_c_${uuid}-lock-0000000001`;
    const kazoo = `${'b'.repeat(32)}__lock__0000000001`;
    const curatorRw = `_c_${uuid}-__WRIT__0000000001`;
    expect([own, curator, kazoo, curatorRw, `${'c'.repeat(32)}-lock-0000000004`, 'notes'].map(styleOf)).toEqual([
      'nestjs-zk-lock',
      'curator-mutex',
      'kazoo',
      'curator-read-write',
      'curator-mutex',
      undefined,
    ]);
    expect(() => exclusiveDriver.order([own, curator])).toThrow(QueueConflictError);
    expect(() => curatorMutexDriver.order([curator, kazoo])).toThrow(/kazoo's Lock/);
    expect(() => curatorMutexDriver.order([curator, curatorRw])).toThrow(/InterProcessReadWriteLock/);
    expect(() => curatorWriteDriver.order([curatorRw, curator])).toThrow(/InterProcessMutex/);
    expect(() => kazooLockDriver.order([kazoo, own])).toThrow(/this library's own layout/);
    expect(() => kazooLockDriver.order([kazoo, curator])).toThrow(/InterProcessMutex/);
    // Someone else's files are skipped by our layout and kazoo's, counted by Curator's (as Curator does).
    expect(exclusiveDriver.order([own, 'notes'])).toHaveLength(1);
    expect(kazooLockDriver.order([kazoo, 'notes'])).toHaveLength(1);
    expect(curatorMutexDriver.order([curator, 'notes'])).toHaveLength(2);
  });
});

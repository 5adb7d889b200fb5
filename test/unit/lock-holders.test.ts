import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, InvalidResourceNameError } from '../../lib/errors.js';
import { detectLayout, layoutOfStyle, leasePoolOf, styleOf } from '../../lib/queue/layouts.js';
import { lockHolders, lockHoldersAt, waitersOf } from '../../lib/queue/lock-holders.js';
import { checkTargets } from '../../lib/recipes/inspect-elsewhere.js';
import { QueueConflictError } from '../../lib/zookeeper/zk-errors.js';

const uuid = '8eb63f3c-8f33-4b5e-9f8c-0123456789ab';
const hex = '0123456789abcdef0123456789abcdef';
const seq = (n: number) => String(n).padStart(10, '0');
const names = (entries: readonly { name: string }[]) => entries.map((entry) => entry.name);

describe("a lock path's layout, told by its nodes' names", () => {
  it.each([
    ['Curator InterProcessMutex (protected)', [`_c_${uuid}-lock-${seq(3)}`], 'curator'],
    ['Curator InterProcessMutex (unprotected)', [`lock-${seq(3)}`], 'curator'],
    ['a kazoo lock named the Curator way', [`${hex}-lock-${seq(1)}`], 'curator'],
    ['Curator InterProcessReadWriteLock', [`_c_${uuid}-__READ__${seq(1)}`, `_c_${uuid}-__WRIT__${seq(2)}`], 'curator'],
    ["Curator LeaderLatch (an election)", [`_c_${uuid}-latch-${seq(2)}`, `_c_${uuid}-latch-${seq(1)}`], 'curator'],
    ['kazoo Lock or WriteLock', [`${hex}__lock__${seq(4)}`], 'kazoo'],
    ['kazoo ReadLock', [`${hex}__rlock__${seq(4)}`], 'kazoo'],
    ["this library's own", [`x-100000511d50000-3-${seq(42)}`], 'nestjs-zk-lock'],
  ])('%s', (_, children, layout) => {
    expect(detectLayout(['a-stranger', ...children])).toEqual({ layout, pool: false });
  });

  it("tells a semaphore's lease pool: Curator's locks/leases, kazoo's bare uuid leases", () => {
    expect(detectLayout(['locks', 'leases'])).toEqual({ layout: 'curator', pool: true });
    expect(detectLayout([hex])).toEqual({ layout: 'kazoo', pool: true });
    expect(leasePoolOf(['leases'])).toBe('curator');
    // Lock nodes first: a stranger named like a kazoo lease does not make our queue a pool.
    expect(detectLayout([`x-100000511d50000-3-${seq(42)}`, hex])).toEqual({ layout: 'nestjs-zk-lock', pool: false });
    expect(leasePoolOf([`${hex}__lock__${seq(1)}`])).toBeUndefined();
  });

  it('names every style of a path that mixes them, the same on every listing order', () => {
    const children = [`${hex}__lock__${seq(2)}`, `_c_${uuid}-lock-${seq(1)}`];
    const mixed = { layout: 'curator', pool: false, mixed: ['curator-mutex', 'kazoo'] };
    expect(detectLayout(children)).toEqual(mixed);
    expect(detectLayout([...children].reverse())).toEqual(mixed);
    // Curator's mutex and its read/write lock do not see each other's nodes either.
    expect(detectLayout([`_c_${uuid}-lock-${seq(1)}`, `_c_${uuid}-__WRIT__${seq(2)}`])?.mixed).toEqual(['curator-mutex', 'curator-read-write']);
    // Nor a LeaderLatch and a lock: an election and a lock on one path.
    expect(detectLayout([`_c_${uuid}-latch-${seq(1)}`, `_c_${uuid}-lock-${seq(2)}`])?.mixed).toEqual(['curator-mutex', 'curator-latch']);
    expect(detectLayout([`${hex}__lock__${seq(2)}`, `_c_${uuid}-latch-${seq(1)}`])).toEqual({ layout: 'curator', pool: false, mixed: ['curator-latch', 'kazoo'] });
  });

  it('names no layout for a path without lock nodes (empty, or only strangers)', () => {
    expect(detectLayout([])).toBeUndefined();
    expect(detectLayout(['config', 'lock-not-a-sequence'])).toBeUndefined();
  });
});

describe("holders and waiters by each layout's rules (what the views and requestRelease share)", () => {
  it("Curator's mutex: the first in Curator's order holds, the rest wait in that order", () => {
    const children = [`_c_${uuid}-lock-${seq(9)}`, `_c_${uuid}-lock-${seq(2)}`, `_c_${uuid}-lock-${seq(5)}`];
    const roles = lockHolders(children, 'curator');
    expect(names(roles.holders)).toEqual([`_c_${uuid}-lock-${seq(2)}`]);
    expect(names(waitersOf(roles))).toEqual([`_c_${uuid}-lock-${seq(5)}`, `_c_${uuid}-lock-${seq(9)}`]);
  });

  it("Curator's LeaderLatch: the first in its order (by the text after `latch-`) holds, as its leader; the rest wait in that order", () => {
    const latch = (n: number, id = uuid) => `_c_${id}-latch-${seq(n)}`;
    const other = 'ffffffff-0000-4000-8000-000000000000';
    expect([latch(1), `latch-${seq(1)}`].map(styleOf)).toEqual(['curator-latch', 'curator-latch']);
    expect(layoutOfStyle('curator-latch')).toBe('curator');
    const roles = lockHolders([latch(9), latch(2, other), latch(5)], 'curator');
    expect(names(roles.holders)).toEqual([latch(2, other)]);
    expect(names(waitersOf(roles))).toEqual([latch(5), latch(9)]);
    expect(roles.mayHold).toEqual([]);
    expect(roles.queue.every((entry) => entry.kind === 'e')).toBe(true);
    // A lock's node on a latch path: the caller that named the layout is told of both.
    expect(() => lockHoldersAt('/svc/leader', [latch(1), `_c_${uuid}-lock-${seq(2)}`], 'curator')).toThrow(
      /'curator' does not match the lock at \/svc\/leader: its path holds Curator's InterProcessMutex .* which do not exclude this election's/,
    );
  });

  it('ours, an election: the head leads, every other participant waits in sequence order', () => {
    const roles = lockHolders([`e-200000511d50000-1-${seq(7)}`, `e-100000511d50000-1-${seq(3)}`, `e-300000511d50000-1-${seq(9)}`], 'nestjs-zk-lock');
    expect(names(roles.holders)).toEqual([`e-100000511d50000-1-${seq(3)}`]);
    expect(names(waitersOf(roles))).toEqual([`e-200000511d50000-1-${seq(7)}`, `e-300000511d50000-1-${seq(9)}`]);
  });

  it("Curator's read/write lock: the reads before the first write hold; a downgrade read and its write hold together", () => {
    const reads = lockHolders([`_c_a-__READ__${seq(1)}`, `_c_b-__READ__${seq(2)}`, `_c_c-__WRIT__${seq(3)}`, `_c_d-__READ__${seq(4)}`], 'curator');
    expect(names(reads.holders)).toEqual([`_c_a-__READ__${seq(1)}`, `_c_b-__READ__${seq(2)}`]);
    expect(names(waitersOf(reads))).toEqual([`_c_c-__WRIT__${seq(3)}`, `_c_d-__READ__${seq(4)}`]);
    const downgraded = lockHolders([`_c_a-__WRIT__${seq(1)}`, `_c_b-__READ__${seq(1)}`, `_c_c-__WRIT__${seq(2)}`], 'curator');
    expect(names(downgraded.holders).sort()).toEqual([`_c_a-__WRIT__${seq(1)}`, `_c_b-__READ__${seq(1)}`]);
  });

  it("kazoo: the readers before the first __lock__ node hold; that node may (a Lock does not see readers, a WriteLock waits)", () => {
    const roles = lockHolders([`${hex}__rlock__${seq(1)}`, `${hex}__lock__${seq(2)}`, `${hex}__rlock__${seq(3)}`, `${hex}__lock__${seq(4)}`], 'kazoo');
    expect(names(roles.holders)).toEqual([`${hex}__rlock__${seq(1)}`]);
    expect(names(roles.mayHold)).toEqual([`${hex}__lock__${seq(2)}`]);
    expect(names(waitersOf(roles))).toEqual([`${hex}__lock__${seq(2)}`, `${hex}__rlock__${seq(3)}`, `${hex}__lock__${seq(4)}`]);
    // First in line, a __lock__ node holds, whichever recipe made it.
    const first = lockHolders([`${hex}__lock__${seq(1)}`, `${hex}__rlock__${seq(2)}`], 'kazoo');
    expect([names(first.holders), names(first.mayHold)]).toEqual([[`${hex}__lock__${seq(1)}`], []]);
  });

  it('ours: a write still at the head holds beside its downgrade read; a read behind a write waits', () => {
    const session = '100000511d50000';
    const roles = lockHolders([`w-${session}-1-${seq(1)}`, `d-${session}-2-${seq(2)}`, `r-200000511d50000-1-${seq(3)}`], 'nestjs-zk-lock');
    expect(names(roles.holders)).toEqual([`w-${session}-1-${seq(1)}`, `d-${session}-2-${seq(2)}`]);
    expect(names(waitersOf(roles))).toEqual([`r-200000511d50000-1-${seq(3)}`]);
  });

  it("refuses another layout's nodes: a typed error naming the layout to use, when a caller named the wrong one", () => {
    const children = [`${hex}__lock__${seq(1)}`];
    expect(() => lockHolders(children, 'curator')).toThrow(QueueConflictError);
    expect(() => lockHoldersAt('/billing/x', children, 'curator')).toThrow(
      new InvalidOptionsError('layout', `'curator' does not match the lock at /billing/x: its path holds kazoo's Lock, WriteLock or ReadLock (layout: 'kazoo') nodes (${children[0]}), which do not exclude this lock's; name it with the layout of its nodes (the CLI's --layout)`),
    );
    // Our own layout under rootPath skips them, as our queue does.
    expect(lockHolders(children, 'nestjs-zk-lock', false).queue).toEqual([]);
  });
});

describe('the paths and scan roots a view is given', () => {
  it('takes absolute paths with an optional layout', () => {
    expect(checkTargets({ paths: [{ zkPath: '/billing/x', layout: 'curator' }, { zkPath: '/jobs/y' }], scan: [{ root: '/billing' }] })).toEqual({
      paths: [
        { zkPath: '/billing/x', layout: 'curator' },
        { zkPath: '/jobs/y', layout: undefined },
      ],
      scan: [{ root: '/billing', layout: undefined }],
    });
  });

  it('refuses what it cannot read, saying which entry and what to give', () => {
    expect(() => checkTargets({ paths: '/billing/x' })).toThrow(/"paths": must be an array of \{ zkPath, layout \}/);
    expect(() => checkTargets({ paths: [{ zkPath: 'billing/x' }] })).toThrow(InvalidResourceNameError);
    expect(() => checkTargets({ paths: [{ zkPath: '/x', layout: 'zookeeper' }] })).toThrow(/"paths\[0\]\.layout": must be 'nestjs-zk-lock'/);
    expect(() => checkTargets({ scan: [{ root: '/' }] })).toThrow(/"scan\[0\]\.root": must not be "\/"/);
    expect(() => checkTargets({ scan: [{}] })).toThrow(/"scan\[0\]\.root": must be an absolute path whose children are locks/);
  });
});

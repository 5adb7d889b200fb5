/**
 * How the views (the live page's JSON, the CLI's table) show an election: kind `election`, its
 * holder as the leader and its waiters as followers in line, each with its id. The same views on a
 * real ZooKeeper are in test/e2e/live-view*.ts.
 */
import { describe, expect, it } from 'vitest';
import { formatTable } from '../../lib/cli/table.js';
import { kindLabel, roleLabel, toViewData } from '../../lib/live-view/view-model.js';
import type { LockInspection, LockNodeInfo } from '../../lib/recipes/lock-inspection.js';

const readAt = new Date('2026-01-01T00:00:10Z');
const node = (name: string, data: LockNodeInfo['data'], session: string, mode: LockNodeInfo['mode'] = 'election'): LockNodeInfo => ({
  node: name,
  mode,
  sessionId: session,
  sequence: Number(name.slice(-10)),
  createdAt: new Date('2026-01-01T00:00:00Z'),
  data,
});
const ours = (id: string) => ({ host: 'web', pid: 7, owner: id });

const election: LockInspection = {
  resource: 'relay',
  path: '/locks/relay',
  layout: 'nestjs-zk-lock',
  recipe: 'queue',
  holders: [node('e-a1-1-0000000001', ours('p0'), 'a1')],
  waiters: [node('e-b2-1-0000000002', ours('p1'), 'b2'), node('e-c3-1-0000000003', ours('p2'), 'c3')],
};
const latch: LockInspection = {
  resource: '/svc/leader',
  path: '/svc/leader',
  layout: 'curator',
  recipe: 'queue',
  holders: [node('_c_8eb63f3c-8f33-4b5e-9f8c-0123456789ab-latch-0000000004', 'java-0', 'b2')],
  waiters: [node('_c_ffffffff-0000-4000-8000-000000000000-latch-0000000007', 'java-1', 'c3')],
};
const mutex: LockInspection = { ...election, resource: 'orders', path: '/locks/orders', holders: [node('x-a1-1-0000000001', ours('job'), 'a1', 'exclusive')], waiters: [] };

describe('an election in the views', () => {
  const view = toViewData({ rootPath: '/locks', readAt, locks: [election, mutex, latch] });

  it('is kind election (curator election for a LeaderLatch); its ids are our nodes\' owners, Curator\'s participants', () => {
    expect(view.locks.map((lock) => [lock.resource, lock.kind, kindLabel(lock)])).toEqual([
      ['relay', 'election', 'election'],
      ['orders', 'exclusive', 'exclusive'],
      ['/svc/leader', 'election', 'curator election'],
    ]);
    expect([...view.locks[0]!.holders, ...view.locks[0]!.waiters].map((n) => [n.mode, n.owner, n.participant])).toEqual([
      ['election', 'p0', undefined],
      ['election', 'p1', undefined],
      ['election', 'p2', undefined],
    ]);
    expect([...view.locks[2]!.holders, ...view.locks[2]!.waiters].map((n) => [n.mode, n.owner, n.participant])).toEqual([
      ['election', undefined, 'java-0'],
      ['election', undefined, 'java-1'],
    ]);
  });

  it('calls the holder the leader and the waiters followers, numbered in line; a lock keeps holder and waiter', () => {
    expect([roleLabel(view.locks[0]!, true, 1), roleLabel(view.locks[0]!, false, 2)]).toEqual(['leader', 'follower #2']);
    expect([roleLabel(view.locks[1]!, true, 1), roleLabel(view.locks[1]!, false, 1)]).toEqual(['holder', 'waiter #1']);
  });

  it("prints the CLI's table rows so", () => {
    const rows = formatTable(view).trimEnd().split('\n').map((line) => line.trimEnd());
    expect(rows).toEqual([
      'RESOURCE     KIND              ROLE         MODE       OWNER   HOST  PID  SESSION  IN QUEUE FOR',
      'relay        election          leader       election   p0      web   7    a1       10.0 s',
      '                               follower #1  election   p1      web   7    b2       10.0 s',
      '                               follower #2  election   p2      web   7    c3       10.0 s',
      'orders       exclusive         holder       exclusive  job     web   7    a1       10.0 s',
      '/svc/leader  curator election  leader       election   java-0             b2       10.0 s',
      '                               follower #1  election   java-1             c3       10.0 s',
    ]);
  });
});

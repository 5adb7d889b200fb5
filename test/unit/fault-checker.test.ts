import { describe, expect, it } from 'vitest';
import { checkHistory, fencedStore } from '../faults/checker.js';
import type { ClientEvent, FaultAction, FencedWrite, LockMode } from '../faults/history.js';

/** One hold, as a worker would record it. */
function hold(
  client: string,
  op: number,
  mode: LockMode,
  granted: number,
  end: number,
  token: number,
  sequence: number,
  options: { lost?: boolean; resource?: string; queueId?: string } = {},
): ClientEvent[] {
  const resource = options.resource ?? 'r';
  const t = token.toString().padStart(20, '0');
  const events: ClientEvent[] = [
    { type: 'requested', client, op, resource, mode, t: granted - 1 },
    { type: 'granted', client, op, resource, mode, t: granted, token: t, sequence, queueId: options.queueId ?? '1', session: client },
  ];
  if (options.lost) events.push({ type: 'lost', client, op, t: end, detail: 'expired' });
  else events.push({ type: 'releasing', client, op, t: end }, { type: 'released', client, op, t: end + 1 });
  return events;
}
const write = (client: string, op: number, mode: LockMode, token: number, t: number): FencedWrite => ({
  client,
  op,
  resource: 'r',
  mode,
  token: token.toString().padStart(20, '0'),
  t,
});

describe('fault-suite history checker', () => {
  it('passes a clean history: writers one after another, readers together', () => {
    const events = [...hold('a', 1, 'write', 10, 20, 100, 1), ...hold('b', 1, 'read', 21, 40, 101, 2), ...hold('c', 1, 'read', 22, 35, 101, 3), ...hold('a', 2, 'write', 41, 50, 102, 4)];
    const writes = [write('a', 1, 'write', 100, 11), write('b', 1, 'read', 101, 23), write('c', 1, 'read', 101, 24), write('a', 2, 'write', 102, 42)];
    const result = checkHistory(events, [], writes, 100);
    expect(result.violations).toEqual([]);
    expect(result.figures).toMatchObject({ acquisitions: 4, writesAccepted: 4, writesRefused: 0 });
  });

  it('catches two writers holding at once, and a reader beside a writer', () => {
    const overlap = checkHistory([...hold('a', 1, 'write', 10, 30, 100, 1), ...hold('b', 1, 'write', 20, 40, 101, 2)], [], [], 100);
    expect(overlap.violations.join()).toMatch(/held r at once/);
    const reader = checkHistory([...hold('a', 1, 'write', 10, 30, 100, 1), ...hold('b', 1, 'read', 20, 40, 101, 2)], [], [], 100);
    expect(reader.violations).toHaveLength(1);
  });

  it('excuses an overlap only for a holder paused past its session that then saw its lost signal, and reports how late', () => {
    const events = [...hold('a', 1, 'write', 10, 95, 100, 1, { lost: true }), ...hold('b', 1, 'write', 60, 70, 101, 2)];
    const paused: FaultAction[] = [
      { t: 20, action: 'pause-client', target: 'a' },
      { t: 90, action: 'resume-client', target: 'a' },
    ];
    const ok = checkHistory(events, paused, [write('a', 1, 'write', 100, 11), write('b', 1, 'write', 101, 61), write('a', 1, 'write', 100, 91)], 200);
    expect(ok.violations).toEqual([]);
    expect(ok.figures.lostSignalDelaysMs).toEqual([5]);
    expect(ok.figures.writesRefused).toBe(1); // the paused holder's late write
    expect(ok.figures.takeoversMs).toEqual([40]);
    const noSignal = checkHistory([...hold('a', 1, 'write', 10, 95, 100, 1), ...hold('b', 1, 'write', 60, 70, 101, 2)], paused, [], 200);
    expect(noSignal.violations.join()).toMatch(/held r at once/);
  });

  it('excuses a waiter paused after ZooKeeper granted it, which reads the grant after the pause and then hears its session is lost', () => {
    // a waits from t=10; ZooKeeper grants it, a is paused at 20 before reading the answer, its session
    // ends, b (behind it in the queue) holds from 60 to 70; a resumes at 90, reads its grant at 91,
    // and is told of the loss at 95.
    const events: ClientEvent[] = [
      { type: 'requested', client: 'a', op: 1, resource: 'r', mode: 'write', t: 10 },
      ...hold('b', 1, 'write', 60, 70, 101, 2),
      { type: 'granted', client: 'a', op: 1, resource: 'r', mode: 'write', t: 91, token: '100'.padStart(20, '0'), sequence: 1, queueId: '1', session: 'a' },
      ...hold('c', 1, 'write', 92, 99, 102, 3),
      { type: 'lost', client: 'a', op: 1, t: 95, detail: 'expired' },
    ];
    const paused: FaultAction[] = [
      { t: 20, action: 'pause-client', target: 'a' },
      { t: 90, action: 'resume-client', target: 'a' },
    ];
    const ok = checkHistory(events, paused, [write('b', 1, 'write', 101, 61), write('a', 1, 'write', 100, 92)], 200);
    expect(ok.violations).toEqual([]);
    expect(ok.figures.lostSignalDelaysMs).toEqual([5]);
    expect(ok.figures.writesRefused).toBe(1);
    // Not paused, or never told: the same history is a violation.
    expect(checkHistory(events, [], [], 200).violations.join()).toMatch(/held r at once|against queue order/);
    const untold = events.filter((e) => e.type !== 'lost');
    expect(checkHistory(untold, paused, [], 200).violations.length).toBeGreaterThan(0);
  });

  it('catches grants against queue order, a token given twice, a refused healthy holder, and acquires that never ended', () => {
    const fifo = checkHistory([...hold('a', 1, 'write', 10, 20, 100, 5), ...hold('b', 1, 'write', 30, 40, 101, 3)], [], [], 100);
    expect(fifo.violations.join()).toMatch(/against queue order/);
    const twice = checkHistory([...hold('a', 1, 'write', 10, 20, 100, 1), ...hold('b', 1, 'write', 30, 40, 100, 2)], [], [], 100);
    expect(twice.violations.join()).toMatch(/given to both/);
    const refused = checkHistory(hold('a', 1, 'write', 10, 20, 100, 1), [], [write('b', 9, 'write', 200, 5), write('a', 1, 'write', 100, 11)], 100);
    expect(refused.violations.join()).toMatch(/refused a#1/);
    const hanging = checkHistory([{ type: 'requested', client: 'a', op: 1, resource: 'r', mode: 'write', t: 1 }], [], [], 100);
    expect(hanging.violations.join()).toMatch(/never finished/);
  });

  it('lets sequences restart after the parent was re-created', () => {
    const events = [...hold('a', 1, 'write', 10, 20, 100, 7), ...hold('b', 1, 'write', 30, 40, 101, 0)];
    expect(checkHistory(events, [{ t: 25, action: 'recreate-parent', target: 'r' }], [], 100).violations).toEqual([]);
  });

  it('orders sequences within one queue only: a parent reaped and created again starts them over', () => {
    const reaped = [...hold('a', 1, 'write', 10, 20, 100, 7), ...hold('b', 1, 'write', 30, 40, 101, 0, { queueId: '2' })];
    expect(checkHistory(reaped, [], [], 100).violations).toEqual([]);
    // The control: the same two grants in one queue are against its order.
    const oneQueue = [...hold('a', 1, 'write', 10, 20, 100, 7), ...hold('b', 1, 'write', 30, 40, 101, 0)];
    expect(checkHistory(oneQueue, [], [], 100).violations.join()).toMatch(/against queue order/);
  });

  it('has a fenced store that refuses lower tokens and stale reads, in send order', () => {
    const store = fencedStore([write('a', 1, 'write', 5, 1), write('b', 1, 'write', 7, 3), write('c', 1, 'read', 6, 4), write('a', 1, 'write', 5, 2)]);
    expect(store.accepted).toBe(3);
    expect(store.refused.map((w) => w.client)).toEqual(['c']);
  });
});

/**
 * The log lines of leadership events, and their levels: a lost term is a warning, as a lost lock is;
 * a term given up is logged at the chosen level. Lock events on a real ZooKeeper are in
 * test/integration/events-logging.test.ts.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { describeLockEvent, LeadershipLostError, type LockEvent } from '../../lib/index.js';
import { logLockEvents } from '../../lib/events/lock-event-logger.js';

const elected: LockEvent = { type: 'elected', group: 'relay', participantId: 'web-1', fencingToken: '42', waitMs: 1234.4, timestamp: 0 };

function revoked(end: 'lost' | 'resigned' | 'left'): LockEvent {
  const error = new LeadershipLostError('relay', '42', end === 'lost' ? 'the session expired' : 'resigned', end === 'lost' ? 'session-expired' : 'given-up', end);
  return { type: 'term-ended', group: 'relay', participantId: 'web-1', fencingToken: '42', leadMs: 5.25, end, reason: error.reason, error, timestamp: 0 };
}

describe('leadership events as log lines', () => {
  it('says who was elected, after how long, with the term\'s token', () => {
    expect(describeLockEvent(elected)).toBe('Elected leader of "relay" as web-1 after 1234 ms, fencing token 42');
  });

  it('gives the error\'s message for a term that ended, and how long it led', () => {
    expect(describeLockEvent(revoked('lost'))).toBe(
      'Leadership of "relay" (fencing token 42) ended: the session expired. Another instance may lead now: stop the leader\'s work, and guard its writes with the fencing token. (led 5.3 ms)',
    );
    expect(describeLockEvent(revoked('resigned'))).toMatch(/^Leadership of "relay" \(fencing token 42\) ended: resigned\. Stop the leader's work now: .* \(led 5\.3 ms\)$/);
  });

  it('says a skipped run was skipped because this instance does not lead the group', () => {
    const skipped: LockEvent = { type: 'skipped', resource: 'relay', mode: 'exclusive', permits: undefined, owner: undefined, reason: 'not-leader', timestamp: 0 };
    expect(describeLockEvent(skipped)).toBe('Skipped a run: this instance does not lead "relay"');
  });

  it('warns of a lost term, and logs an elected one and one given up at the chosen level', () => {
    const events$ = new Subject<LockEvent>();
    const lines: [string, string][] = [];
    const at = (level: string) => (message: unknown) => void lines.push([level, String(message)]);
    const subscription = logLockEvents(events$, { debug: at('debug'), verbose: at('verbose'), log: at('log'), warn: at('warn') }, 'log');
    for (const event of [elected, revoked('resigned'), revoked('left'), revoked('lost')]) events$.next(event);
    subscription.unsubscribe();
    expect(lines.map(([level]) => level)).toEqual(['log', 'log', 'log', 'warn']);
    expect(lines[3]![1]).toMatch(/ended: the session expired/);
  });
});

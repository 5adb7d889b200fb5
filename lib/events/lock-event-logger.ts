import type { Logger } from '@nestjs/common';
import type { Observable, Subscription } from 'rxjs';
import { InvalidOptionsError, shown } from '../errors.js';
import type { LockEvent, LockEventTarget, LockSkippedEvent } from './lock-event-types.js';

/** The Nest log level lock events are written at. */
export type LockEventLogLevel = 'debug' | 'verbose' | 'log';

const LEVELS: readonly unknown[] = [undefined, false, true, 'debug', 'verbose', 'log'];

/** The level the `logEvents` option asks for, or undefined for none. */
export function logEventsLevel(option: unknown): LockEventLogLevel | undefined {
  if (!LEVELS.includes(option)) {
    throw new InvalidOptionsError('logEvents', `must be true, false, 'debug', 'verbose' or 'log', got ${shown(option)}`);
  }
  if (option === undefined || option === false) return undefined;
  return option === true ? 'debug' : (option as LockEventLogLevel);
}

/**
 * Writes every lock event to `logger` at `level`, except a lost lock, which is a warning. A lost
 * session is left to the caller's own warning, which is written whether or not events are logged.
 */
export function logLockEvents(
  events$: Observable<LockEvent>,
  logger: Pick<Logger, LockEventLogLevel | 'warn'>,
  level: LockEventLogLevel,
): Subscription {
  return events$.subscribe((event) => {
    if (event.type === 'lost' || (event.type === 'term-ended' && event.end === 'lost')) logger.warn(describeLockEvent(event));
    else if (event.type !== 'connection' || event.state !== 'lost') logger[level](describeLockEvent(event));
  });
}

/** One line for a lock event. */
export function describeLockEvent(event: LockEvent): string {
  switch (event.type) {
    case 'connection':
      return `ZooKeeper session ${session(event.sessionId)}: ${event.state}`;
    case 'requested':
      return `${event.tryOnly ? 'Trying' : 'Waiting for'} ${lockOf(event)}`;
    case 'acquired':
      return `Acquired ${lockOf(event)} after ${ms(event.waitMs)}, fencing token ${event.fencingToken}${event.reentrant ? ' (reentrant)' : ''}`;
    case 'released':
      return `Released ${lockOf(event)} after holding it ${ms(event.holdMs)}${event.reentrant ? ' (reentrant)' : ''}`;
    case 'timed-out':
      return event.tryOnly ? `${capitalised(lockOf(event))} is busy (tryAcquire)` : `Timed out after ${ms(event.waitMs)} waiting for ${lockOf(event)}`;
    case 'aborted':
      return `Stopped waiting for ${lockOf(event)} after ${ms(event.waitMs)}: the caller's signal aborted`;
    case 'failed':
      return `Could not lock ${lockOf(event)}: ${event.error instanceof Error ? event.error.message : String(event.error)}`;
    case 'lost':
      return `${event.error.message} (held ${ms(event.holdMs)})`;
    case 'release-requested':
      return `Another service asked for ${lockOf(event)} to be released, after it was held ${ms(event.holdMs)}`;
    case 'skipped':
      return event.reason === 'busy'
        ? `Skipped a run: ${lockOf(event)} is busy`
        : event.reason === 'not-leader'
          ? `Skipped a run: this instance does not lead "${event.resource}"`
          : `Skipped a run: this tick already ran under ${lockOf(event)}`;
    case 'elected':
      return `Elected leader of "${event.group}" as ${event.participantId} after ${ms(event.waitMs)}, fencing token ${event.fencingToken}`;
    case 'term-ended':
      return `${event.error.message} (led ${ms(event.leadMs)})`;
  }
}

function lockOf(event: Omit<LockEventTarget, 'timestamp' | 'mode'> & { readonly mode: LockSkippedEvent['mode'] }): string {
  if (event.mode === 'election') return `the election "${event.resource}"`;
  const kind = event.mode === 'semaphore' ? `semaphore of ${event.permits}` : event.mode;
  return `the ${kind} lock on "${event.resource}"${event.owner === undefined ? '' : ` for ${event.owner}`}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function ms(value: number): string {
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
}

function session(id: string): string {
  return id ? `0x${id}` : '(none)';
}

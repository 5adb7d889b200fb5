import { InvalidOptionsError, shown } from '../errors.js';

/**
 * Fencing tokens: 40 decimal digits, fixed width, so that tokens compare correctly as strings and as
 * BigInts:
 * - the operator's token epoch (4 digits, `tokenEpoch`): raised after ZooKeeper is restored from an
 *   older snapshot or an empty data directory, whose zxids start over lower, so that tokens stay
 *   monotone across the restore;
 * - the zxid that created the queue's parent (20 digits, which any 64-bit zxid fits);
 * - the node's sequence number in that queue (10 digits);
 * - which holder of that grant it is (6 digits; 0 for the grant itself: a cohort hands one grant to
 *   several callers of its process in turn).
 *
 * Why it grows with every grant of a resource: within one queue, a holder is granted only once every
 * entry below it that it conflicts with is gone, so later holders have higher sequence numbers; a
 * reaped or deleted parent that is created again gets a higher zxid than anything before it, while
 * its sequence numbers start over. The simple lock, which has no queue, passes its node's own zxid
 * and sequence 0.
 */
export interface TokenParts {
  readonly epoch: number;
  readonly queueZxid: number;
  readonly sequence?: number;
  readonly handoff?: number;
}

/**
 * A grant's token as the grant carries it: what it is made of (the epoch at the grant, the queue's
 * zxid, the sequence; a simple lock's node czxid), formatted only when someone reads it
 * (GrantedLock.fencingToken), or a token already made (a downgrade read's, a cohort's handoff).
 */
export type GrantToken = string | TokenParts;

/** The largest token epoch (4 digits). */
export const MAX_TOKEN_EPOCH = 9999;
/** Most holders one ZooKeeper grant can serve within a process (a cohort's local handoffs). */
export const MAX_HANDOFFS_PER_GRANT = 999_999;
const HANDOFF_DIGITS = 6;

export function formatToken({ epoch, queueZxid, sequence = 0, handoff = 0 }: TokenParts): string {
  return (
    epoch.toString().padStart(4, '0') +
    queueZxid.toString().padStart(20, '0') +
    sequence.toString().padStart(10, '0') +
    handoff.toString().padStart(HANDOFF_DIGITS, '0')
  );
}

/** The token of the `handoff`-th holder of the grant whose own token is `grantToken`. */
export function handoffToken(grantToken: string, handoff: number): string {
  return grantToken.slice(0, -HANDOFF_DIGITS) + handoff.toString().padStart(HANDOFF_DIGITS, '0');
}

/** The `tokenEpoch` option, checked. */
export function validateTokenEpoch(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOKEN_EPOCH) {
    throw new InvalidOptionsError('tokenEpoch', `must be a whole number from 0 to ${MAX_TOKEN_EPOCH}, got ${shown(value)}`);
  }
  return value;
}

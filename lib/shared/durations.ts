import { InvalidOptionsError, shown } from '../errors.js';

/** setTimeout's largest delay, in ms; Node fires longer ones at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** What a duration option accepts (see checkMs). */
export interface MsRange {
  /** The smallest value. @default 0 */
  min?: number;
  /** `min` itself is refused: with the default min, the duration must be positive. */
  minExclusive?: boolean;
  /**
   * The largest value, inclusive: `Infinity` accepts Infinity too, `Number.MAX_VALUE` any finite
   * number (neither is named in the message). @default MAX_TIMER_MS
   */
  max?: number;
  /** How the message names `max` (`nine tenths of sessionTimeoutMs (3600)`). @default max itself */
  maxLabel?: string;
  /** Only whole numbers of ms. */
  whole?: boolean;
  /** What to do about it, after the value in the message. */
  hint?: string;
}

/**
 * Checks a duration option, in ms: absent, it answers undefined and the caller applies its default;
 * otherwise it must be a number (never NaN) in the range, or InvalidOptionsError names the option,
 * the range and the value given.
 * @throws InvalidOptionsError
 */
export function checkMs(value: unknown, option: string, range: MsRange = {}): number | undefined {
  if (value === undefined) return undefined;
  const { min = 0, minExclusive = false, max = MAX_TIMER_MS, whole = false } = range;
  const fits =
    typeof value === 'number' && (minExclusive ? value > min : value >= min) && value <= max && (!whole || Number.isInteger(value));
  if (fits) return value;
  const hint = range.hint ? `: ${range.hint}` : '';
  throw new InvalidOptionsError(option, `must be ${rangeText(min, minExclusive, max, range.maxLabel, whole)}, got ${shown(value)}${hint}`);
}

/** `a whole number of milliseconds from 100 to 1073741823`, `a positive number of milliseconds up to …`, `… at least 0`. */
function rangeText(min: number, minExclusive: boolean, max: number, maxLabel: string | undefined, whole: boolean): string {
  const positive = minExclusive && min === 0;
  const kind = `a ${whole ? 'whole ' : ''}${positive ? 'positive ' : ''}number of milliseconds`;
  const upper = maxLabel ?? (max < Number.MAX_VALUE ? String(max) : undefined);
  if (positive) return upper === undefined ? kind : `${kind} up to ${upper}`;
  if (upper === undefined) return minExclusive ? `${kind} above ${min}` : `${kind}, at least ${min}`;
  return minExclusive ? `${kind} above ${min} and up to ${upper}` : `${kind} from ${min} to ${upper}`;
}

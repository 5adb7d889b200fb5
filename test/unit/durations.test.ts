import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../lib/errors.js';
import { checkMs, MAX_TIMER_MS, type MsRange } from '../../lib/shared/durations.js';
import { InMemoryZooKeeper } from '../../lib/testing/index.js';

const refused = (value: unknown, range?: MsRange): InvalidOptionsError => {
  try {
    checkMs(value, 'someMs', range);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).option).toBe('someMs');
    return error as InvalidOptionsError;
  }
  throw new Error(`accepted ${String(value)}`);
};

describe('checkMs, the one check of a duration option', () => {
  it('answers undefined for an absent option, so that each caller applies its own default', () => {
    expect(checkMs(undefined, 'someMs')).toBeUndefined();
    expect(checkMs(undefined, 'someMs', { min: 100, whole: true })).toBeUndefined();
  });

  it('refuses what is not a number, NaN included, whatever the range', () => {
    for (const value of [null, '100', NaN, {}, true]) expect(refused(value, { max: Infinity })).toBeInstanceOf(InvalidOptionsError);
  });

  it('by default takes 0 up to setTimeout’s largest delay, and no Infinity', () => {
    expect(checkMs(0, 'someMs')).toBe(0);
    expect(checkMs(MAX_TIMER_MS, 'someMs')).toBe(MAX_TIMER_MS);
    expect(refused(MAX_TIMER_MS + 1).message).toBe(`Invalid nestjs-zk-lock option "someMs": must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${MAX_TIMER_MS + 1}.`);
    expect(refused(-1).message).toMatch(/from 0 to 2147483647, got -1\.$/);
    expect(refused(Infinity).message).toMatch(/got Infinity\.$/);
  });

  it('a positive duration (minExclusive) refuses 0', () => {
    expect(refused(0, { minExclusive: true }).message).toMatch(/"someMs": must be a positive number of milliseconds up to 2147483647, got 0\.$/);
    expect(checkMs(0.5, 'someMs', { minExclusive: true })).toBe(0.5);
  });

  it('a whole duration refuses fractions', () => {
    expect(refused(1500.5, { min: 100, max: 2 ** 30 - 1, whole: true }).message).toMatch(/must be a whole number of milliseconds from 100 to 1073741823, got 1500\.5\.$/);
    expect(checkMs(1500, 'someMs', { whole: true })).toBe(1500);
  });

  it('max Infinity takes Infinity; max Number.MAX_VALUE any finite number; neither is named', () => {
    expect(checkMs(Infinity, 'someMs', { max: Infinity })).toBe(Infinity);
    expect(refused(-1, { max: Infinity }).message).toMatch(/must be a number of milliseconds, at least 0, got -1\.$/);
    expect(checkMs(1e300, 'someMs', { max: Number.MAX_VALUE })).toBe(1e300);
    expect(refused(Infinity, { min: 100, max: Number.MAX_VALUE }).message).toMatch(/must be a number of milliseconds, at least 100, got Infinity\.$/);
  });

  it('names the maximum by its label and ends with the hint', () => {
    const error = refused(4000, { max: 3600, maxLabel: 'nine tenths of sessionTimeoutMs (3600)', hint: 'lower it' });
    expect(error.message).toMatch(/must be a number of milliseconds from 0 to nine tenths of sessionTimeoutMs \(3600\), got 4000: lower it\.$/);
    expect(checkMs(3600, 'someMs', { max: 3600 })).toBe(3600);
  });

  it('shows at most a few hundred characters of what it was given', () => {
    expect(refused('x'.repeat(5000)).message.length).toBeLessThan(400);
  });
});

describe('the duration options that use it', () => {
  it("the in-memory server's containerReapDelayMs: a number of ms from 0, or false", async () => {
    expect(() => new InMemoryZooKeeper({ containerReapDelayMs: -1 })).toThrow(InvalidOptionsError);
    expect(() => new InMemoryZooKeeper({ containerReapDelayMs: Infinity })).toThrow(/"containerReapDelayMs".*from 0 to 2147483647, got Infinity: false turns reaping off/);
    for (const containerReapDelayMs of [0, 200, false] as const) await new InMemoryZooKeeper({ containerReapDelayMs }).close();
  });
});

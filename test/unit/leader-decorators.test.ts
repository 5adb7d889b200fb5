/**
 * @Leader and @OnLeadership where they are declared: the wrapper keeps the method's name and every
 * metadata key (so @Interval and @Cron work stacked above or below it), and bad groups and options
 * fail at once with what to do.
 */
import 'reflect-metadata';
import { Interval } from '@nestjs/schedule';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, Leader, OnLeadership } from '../../lib/index.js';
import { LEADER_METADATA, ON_LEADERSHIP_METADATA } from '../../lib/nest/zk-lock.constants.js';

class Jobs {
  @Interval(1000)
  @Leader('below')
  below(): void {}

  @Leader('above')
  @Interval(1000)
  above(): void {}

  @OnLeadership('relay')
  start(): void {}
}

describe('@Leader and @OnLeadership where declared', () => {
  it('keep the name and every metadata key, with @Interval stacked in either order', () => {
    for (const name of ['below', 'above'] as const) {
      const method = Jobs.prototype[name];
      expect(method.name).toBe(name);
      expect(Reflect.getMetadataKeys(method)).toEqual(expect.arrayContaining(['SCHEDULE_INTERVAL_OPTIONS', LEADER_METADATA]));
      expect(Reflect.getMetadata(LEADER_METADATA, method)).toMatchObject({ group: name, method: `Jobs.${name}` });
    }
    expect(Reflect.getMetadata(ON_LEADERSHIP_METADATA, Jobs.prototype.start)).toMatchObject({ group: 'relay', method: 'Jobs.start' });
  });

  it('refuse a bad group or option at once, saying what is expected', () => {
    expect(() => Leader('')).toThrow(InvalidOptionsError);
    expect(() => Leader(42 as never)).toThrow(/@Leader group.*non-empty string/);
    expect(() => Leader('g', { oncePerTick: 'yes' as never })).toThrow(/oncePerTick.*true or false/);
    expect(() => OnLeadership('g', { oncePerTick: true } as never)).toThrow(/oncePerTick is not an option; the options are layout, zkPath/);
    expect(() => Leader('g', { layout: 'zoo' as never })).toThrow(/@Leader layout/);
    expect(() => Leader('g', { zkPath: 'relative' })).toThrow(/relative/);
  });

  it('refuse what is not a method', () => {
    const descriptor: PropertyDescriptor = { value: 42 };
    expect(() => Leader('g')(Jobs.prototype, 'field', descriptor)).toThrow(/can only decorate methods; field is not one/);
  });
  it('says which decorator needs a LockService when none runs', () => {
    expect(() => new Jobs().below()).toThrow(/Jobs.below is decorated with @Leader, but no LockService is running/);
  });
});

/**
 * A preload (`node --import`) that shifts this process's `Date` by CLOCK_OFFSET_MS, as a host whose
 * clock is that far off would see it: `Date.now()`, `new Date()` and `Date()` all read the shifted
 * time. `performance.timeOrigin + performance.now()` still reads the real one.
 */
const offset = Number(process.env.CLOCK_OFFSET_MS ?? '0');
if (!Number.isFinite(offset)) throw new Error(`CLOCK_OFFSET_MS must be a number of ms, got ${process.env.CLOCK_OFFSET_MS}`);

if (offset !== 0) {
  const RealDate = globalThis.Date;
  const now = (): number => RealDate.now() + offset;
  const ShiftedDate = function (this: unknown, ...args: unknown[]): Date | string {
    if (new.target === undefined) return new RealDate(now()).toString();
    return args.length === 0 ? new RealDate(now()) : new (RealDate as unknown as new (...a: unknown[]) => Date)(...args);
  } as unknown as DateConstructor;
  Object.defineProperties(ShiftedDate, {
    prototype: { value: RealDate.prototype },
    now: { value: now },
    parse: { value: RealDate.parse.bind(RealDate) },
    UTC: { value: RealDate.UTC.bind(RealDate) },
  });
  globalThis.Date = ShiftedDate;
}

export {};

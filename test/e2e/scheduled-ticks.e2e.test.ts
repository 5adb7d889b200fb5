/**
 * Scheduled jobs across processes whose clocks disagree: each instance of the tick app
 * (build/test/support/tick-app/main.js, built by `npm run build:sample`) shifts its own `Date` by
 * its own offset (the shifted-clock preload), as three hosts would be; one real ZooKeeper; the real
 * @nestjs/schedule. Every job takes about a millisecond, so without oncePerTick an instance that fires
 * later finds the lock free and runs the tick again (the controls show it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertTickAppBuilt, skippedLine, startTickApp, type TickApp, timedLine } from '../support/tick-app-process.js';
import { eventually, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

/** The clocks of the three instances, in ms from the real one (later hosts fire later). */
const OFFSETS = [0, -300, -600];
/** Whole seconds of runs looked at. */
const SECONDS = 12;

interface Run {
  job: string;
  instance: string;
  /** Real time of the run, in ms since the epoch. */
  at: number;
  /** The instance's own clock when the scheduler called the method: a cron run's tick is its second. */
  calledAt: number;
}

const runs: Run[] = [];
/** `<resource> <reason>` of every skipped event, counted. */
const skipped = new Map<string, number>();
/** What the instances wrote to stderr (Nest's errors and warnings). */
let stderr = '';

function start(name: string, offset: number, env: Record<string, string>): Promise<TickApp> {
  return startTickApp(name, {
    env,
    offsetMs: offset,
    onStderr: (text) => (stderr += text),
    onLine: (line) => {
      const timed = timedLine(line);
      if (timed?.word === 'ran') runs.push({ job: timed.job, instance: timed.instance, at: timed.at, calledAt: Number(timed.value) });
      const what = skippedLine(line);
      if (what !== undefined) skipped.set(what, (skipped.get(what) ?? 0) + 1);
    },
  });
}

/**
 * Runs of a cron `job` for each tick of [from, from + SECONDS s): a run's tick is the second its
 * instance's clock read when cron called the method (cron fires on the second, by that clock).
 */
function perTick(job: string, from: number): number[] {
  const counts = new Array<number>(SECONDS).fill(0);
  for (const run of runs) {
    const tick = Math.floor((run.calledAt - from) / 1000);
    if (run.job === job && tick >= 0 && tick < SECONDS) counts[tick]! += 1;
  }
  return counts;
}

/** The ms between consecutive runs of `job` in the counted seconds. */
function gapsOf(job: string, from: number): number[] {
  const times = runs.filter((run) => run.job === job && run.at >= from && run.at < from + SECONDS * 1000).map((run) => run.at);
  times.sort((a, b) => a - b);
  return times.slice(1).map((at, i) => at - times[i]!);
}

describe('scheduled jobs on three instances with skewed clocks (0, -300, -600 ms): one run per tick', () => {
  const zk = useZooKeeper();
  const instances: TickApp[] = [];
  /** The first whole second (real clock, ms) after every instance was ready. */
  let from = 0;

  beforeAll(async () => {
    assertTickAppBuilt();
    const env = { ZK_CONNECT: zk.connectString };
    // A long session for the counted jobs (a busy machine must not cost them their locks), a short
    // one for the slow job, whose killed holder's lock goes with its session.
    const ticks = { ...env, JOBS: 'ticks', ROOT_PATH: uniqueRoot('ticks'), SESSION_TIMEOUT_MS: '6000' };
    const slow = { ...env, JOBS: 'slow', ROOT_PATH: uniqueRoot('slow'), SESSION_TIMEOUT_MS: '2000', SLOW_JOB_MS: '600' };
    // All at once: the slow pair's kill test runs while the others' seconds are counted.
    instances.push(
      ...(await Promise.all([
        ...OFFSETS.map((offset, i) => start(`t${i}`, offset, ticks)),
        start('s0', 0, slow),
        start('s1', -300, slow),
      ])),
    );
    from = (Math.floor(Date.now() / 1000) + 1) * 1000;
  }, 60_000);
  afterAll(() => {
    for (const { child } of instances) child.kill('SIGKILL');
    // The figures, for the docs: runs per counted second of each job.
    const jobs = [...new Set(runs.map((run) => run.job))].filter((job) => job !== 'slow').sort();
    const gapRange = (job: string): string => `runs ${gapsOf(job, from).length + 1}, gaps ${Math.min(...gapsOf(job, from))} to ${Math.max(...gapsOf(job, from))} ms`;
    console.log(jobs.map((job) => `${job}: ${job.startsWith('cron') ? `per tick ${perTick(job, from).join(' ')}, ` : ''}${gapRange(job)}`).join('\n'));
    console.log([...skipped].map(([what, count]) => `skipped ${what}: ${count}`).join('\n'));
  });

  const gaps = (job: string): number[] => gapsOf(job, from);

  /** Waits until the counted seconds are over, and a second more for the late instances' runs. */
  async function counted(): Promise<void> {
    const end = from + SECONDS * 1000 + 1000;
    if (Date.now() < end) await sleep(end - Date.now());
  }

  it('a holder killed mid-run: a later tick still runs, on the other instance', async () => {
    const slow = instances.filter((instance) => instance.name.startsWith('s'));
    await eventually(() => runs.some((run) => run.job === 'slow'), { what: 'a slow run', timeoutMs: 10_000 });
    const victim = runs.find((run) => run.job === 'slow')!.instance;
    const killedAt = Date.now();
    slow.find((instance) => instance.name === victim)!.child.kill('SIGKILL'); // it is asleep in its 600 ms run
    const survivor = slow.find((instance) => instance.name !== victim)!.name;
    // Its lock goes with its session (2 s); the ticks after that run on the survivor.
    await eventually(() => runs.some((run) => run.job === 'slow' && run.instance === survivor && run.at > killedAt), {
      what: `a slow run on ${survivor} after ${victim} was killed`,
      timeoutMs: 10_000,
    });
    const ticks = new Set(runs.filter((run) => run.job === 'slow').map((run) => Math.floor(run.calledAt / 1000)));
    expect(ticks.size).toBe(runs.filter((run) => run.job === 'slow').length); // never two runs of one tick
  });

  it.each(['cron', 'cron-hold'])('@Cron every second (%s): every tick runs exactly once', async (job) => {
    await counted();
    expect(perTick(job, from)).toEqual(new Array<number>(SECONDS).fill(1));
  });

  it('@Cron control (oncePerTick: false): ticks run on several instances', async () => {
    await counted();
    const counts = perTick('cron-control', from);
    expect(counts.filter((n) => n > 1).length).toBeGreaterThan(SECONDS / 2);
  });

  it.each(['interval', 'interval-hold'])(
    '@Interval(1000) (%s): at most one run per period of ZooKeeper\'s clock across the three instances, and a run every period or so',
    async (job) => {
      await counted();
      const between = gaps(job);
      // A run is due only once 900 ms (the period less a tenth) have passed on ZooKeeper's clock
      // since the last: over SECONDS seconds no more than this many runs, however the timers drift
      // (the control, without the record, runs about three times as often). Gaps between two runs
      // as the instances saw them are not bounded: a run delayed by a busy event loop sits closer
      // to the next one.
      expect(between.length + 1, `gaps: ${between.join(' ')}`).toBeLessThanOrEqual(Math.floor((SECONDS * 1000) / 900) + 1);
      // Three timers a second: a period is missed only when all three are late by most of one.
      expect(between.length + 1, `gaps: ${between.join(' ')}`).toBeGreaterThanOrEqual(SECONDS - 2);
    },
  );

  it('reports the skipped runs as events with their reasons, and never logs an error', async () => {
    await counted();
    // Every instance but the first to fire skips each tick: the others fire while the first still
    // holds the lock (busy), or after it ran (ran-this-tick).
    const of = (resource: string): number => (skipped.get(`${resource} busy`) ?? 0) + (skipped.get(`${resource} ran-this-tick`) ?? 0);
    expect(of('cron')).toBeGreaterThanOrEqual(SECONDS * 2);
    expect(skipped.get('cron ran-this-tick')).toBeGreaterThan(SECONDS);
    expect(skipped.get('cron-hold busy')).toBeGreaterThan(SECONDS); // the -300 ms instance fires inside the 400 ms hold
    expect(skipped.get('cron-control ran-this-tick')).toBeUndefined();
    expect(stderr).not.toMatch(/ERROR/);
  });

  it('@Interval control (oncePerTick: false): runs closer than the period, more of them than seconds', async () => {
    await counted();
    // The three timers start within milliseconds of each other, so some runs find the lock busy; the
    // rest run again within the same period.
    expect(gaps('interval-control').length + 1).toBeGreaterThan(Math.floor((SECONDS * 1000) / 900) + 1);
    expect(Math.min(...gaps('interval-control'))).toBeLessThan(850);
  });
});

/**
 * @Leader with @Interval on three instances (issue 29): three processes of the tick app (JOBS=leader,
 * build/test/support/tick-app/main.js, built by `npm run build:sample`) on one real ZooKeeper, with
 * 2 s sessions. The schedule fires every 300 ms on each instance and runs on the leader of
 * `leader-jobs` only: a run prints `ran` with the leadership's fencing token, a skipped one `skipped
 * leader-jobs not-leader`, and each term `elected` at its start and `revoked` when its handle's
 * signal aborts (see LeaderJobs). The leader is killed (SIGKILL): one other instance takes over once
 * its session expires. The other two are then stopped by SIGTERM in turn: each shutdown hands
 * leadership over. Times are real ones (performance's clock), comparable across the processes;
 * no bound below is a claim about speed, only how long a test may wait.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertTickAppBuilt, skippedLine, startTickApp, stopTickApp, type TickApp, type TimedLine, timedLine } from '../support/tick-app-process.js';
import { eventually, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

const GROUP = 'leader-jobs';
const NAMES = ['l0', 'l1', 'l2'];
/** Long enough for the killed leader's session to expire and for a busy machine, many times over. */
const TAKEOVER_TIMEOUT_MS = 30_000;

/** A `ran`, `elected` or `revoked` line, with the order the test read it in (for equal times). */
interface Line extends TimedLine {
  readonly seq: number;
}

const lines: Line[] = [];
/** `skipped` lines by instance: `<resource> <reason>` of each. */
const skipped = new Map<string, string[]>(NAMES.map((name) => [name, []]));
let stderr = '';

const of = (word: string, instance?: string): Line[] => lines.filter((line) => line.word === word && (instance === undefined || line.instance === instance));
const notLeader = (instance: string): number => skipped.get(instance)!.filter((what) => what === `${GROUP} not-leader`).length;

/** The timed lines in real-time order (a process's own lines keep their order: its clock is monotonic). */
function inOrder(): Line[] {
  return [...lines].sort((a, b) => a.at - b.at || a.seq - b.seq);
}

/**
 * Checks that every run so far came from the instance that printed `elected` last, with that
 * term's token, and returns the instances that ran, in real-time order, each change once.
 */
function checkRuns(): string[] {
  let term: Line | undefined;
  const running: string[] = [];
  for (const line of inOrder()) {
    if (line.word === 'elected') term = line;
    if (line.word !== 'ran') continue;
    const where = `run at ${line.at} on ${line.instance} (token ${line.value}); last elected: ${term ? `${term.instance} at ${term.at}, token ${term.value}` : 'none'}`;
    expect(line.instance, where).toBe(term?.instance);
    expect(line.value, where).toBe(term?.value);
    if (running.at(-1) !== line.instance) running.push(line.instance);
  }
  return running;
}

describe('@Leader with @Interval in three instances', () => {
  const zk = useZooKeeper();
  const apps = new Map<string, TickApp>();
  /** Who leads, phase by phase. */
  let first = '';
  let second = '';
  let third = '';

  beforeAll(async () => {
    assertTickAppBuilt();
    // A 2 s session, so that a killed leader's leadership goes within seconds; a lease margin under a
    // third of it, so that the C client's own pings keep the lease on a busy machine.
    const env = { ZK_CONNECT: zk.connectString, JOBS: 'leader', ROOT_PATH: uniqueRoot('leader'), SESSION_TIMEOUT_MS: '2000', LEASE_MARGIN_MS: '600' };
    const started = await Promise.all(
      NAMES.map((name) =>
        startTickApp(name, {
          env,
          onStderr: (text) => (stderr += text),
          onLine: (text) => {
            const line = timedLine(text);
            if (line) lines.push({ ...line, seq: lines.length });
            const what = skippedLine(text);
            if (what !== undefined) skipped.get(name)!.push(what);
          },
        }),
      ),
    );
    for (const app of started) apps.set(app.name, app);
  }, 120_000); // instances starting on a loaded machine (START_TIMEOUT_MS each, at once)

  afterAll(() => {
    for (const { child } of apps.values()) child.kill('SIGKILL');
    console.log(
      NAMES.map((name) => `${name}: elected ${of('elected', name).map((line) => line.value).join(',') || '-'}, runs ${of('ran', name).length}, skipped ${notLeader(name)}`).join('\n'),
    );
  });

  it('runs on the instance elected last, with its token; the others skip with not-leader', async () => {
    await eventually(
      () => {
        const elected = of('elected');
        return elected.length > 0 && of('ran', elected[0]!.instance).length >= 3 && NAMES.every((name) => name === elected[0]!.instance || notLeader(name) >= 3);
      },
      { what: 'a leader that ran three times, and two instances that skipped three times', timeoutMs: TAKEOVER_TIMEOUT_MS },
    );
    expect(of('elected')).toHaveLength(1);
    first = of('elected')[0]!.instance;
    expect(checkRuns()).toEqual([first]);
    expect(of('revoked')).toEqual([]);
    // Every skipped run says why: not the leader (the first may have skipped too, before it was elected).
    for (const name of NAMES) expect(skipped.get(name)!.filter((what) => what !== `${GROUP} not-leader`), name).toEqual([]);
  });

  it('after the leader is killed, exactly one other instance leads and runs: the running instance changes once', async () => {
    const before = of('elected')[0]!;
    await stopTickApp(apps.get(first)!, 'SIGKILL');
    const elected = (await eventually(() => of('elected').find((line) => line.instance !== first), {
      what: `another instance to be elected after ${first} was killed`,
      timeoutMs: TAKEOVER_TIMEOUT_MS,
    }))!;
    second = elected.instance;
    third = NAMES.find((name) => name !== first && name !== second)!;
    const thirdSkipped = notLeader(third);
    await eventually(() => of('ran', second).length >= 5 && notLeader(third) >= thirdSkipped + 3, {
      what: `${second} to run five times and ${third} to skip three more times`,
      timeoutMs: TAKEOVER_TIMEOUT_MS,
    });
    expect(of('elected').map((line) => line.instance)).toEqual([first, second]);
    expect(BigInt(elected.value)).toBeGreaterThan(BigInt(before.value));
    expect(checkRuns()).toEqual([first, second]);
    expect(of('ran', third)).toEqual([]);
    expect(of('revoked')).toEqual([]); // a killed process prints nothing
  });

  it('stopped by SIGTERM in turn: each shutdown ends its term (revoked) and hands leadership over', async () => {
    const secondTerm = of('elected', second)[0]!;
    const secondExit = await stopTickApp(apps.get(second)!, 'SIGTERM');
    expect(secondExit).toEqual({ code: null, signal: 'SIGTERM' }); // Nest's shutdown hooks ran, then it re-raised the signal
    const secondRevoked = of('revoked', second);
    expect(secondRevoked.map((line) => line.value)).toEqual([secondTerm.value]);
    // The handover: the last instance leads once the one that led has stopped.
    const thirdTerm = (await eventually(() => of('elected', third)[0], { what: `${third} to be elected after ${second} stopped`, timeoutMs: TAKEOVER_TIMEOUT_MS }))!;
    expect(thirdTerm.at).toBeGreaterThanOrEqual(secondRevoked[0]!.at);
    expect(BigInt(thirdTerm.value)).toBeGreaterThan(BigInt(secondTerm.value));
    await eventually(() => of('ran', third).length >= 3, { what: `${third} to run three times`, timeoutMs: TAKEOVER_TIMEOUT_MS });
    expect(checkRuns()).toEqual([first, second, third]);

    const thirdExit = await stopTickApp(apps.get(third)!, 'SIGTERM');
    expect(thirdExit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(of('revoked', third).map((line) => line.value)).toEqual([thirdTerm.value]);
    expect(of('elected').map((line) => line.instance)).toEqual([first, second, third]);
    expect(checkRuns()).toEqual([first, second, third]);
    expect(stderr).not.toMatch(/ERROR/);
  });
});

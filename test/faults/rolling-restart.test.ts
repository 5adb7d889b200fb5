import { describe, expect, it } from 'vitest';
import { describeStalls, runRollingRestart } from './rolling-restart-run.js';

describe('rolling restart (ZooKeeper sample timing, library defaults, 3 processes on 3 locks)', () => {
  it('restarts every member in turn, the leader too, without a lock lost by a busy session or an acquire failed', async () => {
    const figures = await runRollingRestart({ log: (line) => console.log(`[rolling] ${line}`) });
    // Printed, not asserted: how long acquires stalled at each restart (docs/faults.md has the figures).
    console.log(`[rolling] ${figures.acquisitions} acquisitions; stall per restart: ${describeStalls(figures.restarts)}`);
    expect(figures.lostDetails).toEqual([]);
    // Printed, not asserted: an idle session's hold meets each restart with up to half its lease
    // gone (it renews after half the lease without an answer), and a leader election of 1-2 s can
    // outlast the 1.9 s left; it was lost in two of four runs on a quiet machine, once with a 955 ms stall of the busy sessions. Issue 35 is open on it.
    console.log(`[rolling] the idle session's hold: ${figures.longHoldLost === undefined ? 'held throughout' : `lost: ${figures.longHoldLost}`}`);
    expect(figures.lost).toBe(0);
    expect(figures.failed).toBe(0);
    expect(figures.timedOut).toBe(0);
    // Exclusivity, fencing tokens only growing, FIFO grants: the checker's verdict on the history.
    expect(figures.violations).toEqual([]);
    expect(figures.restarts.some((r) => r.wasLeader)).toBe(true);
    expect(figures.acquisitions).toBeGreaterThan(100);
  }, 240_000);
});

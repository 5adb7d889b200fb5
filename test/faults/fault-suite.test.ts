import { describe, expect, it } from 'vitest';
import { faultsToRun } from './run-options.js';
import { describeReport, runFaultSuite } from './suite.js';

/** The faults that pause a holder past its session: what the excused overlaps and refused writes come from. */
const PAUSED_PAST_SESSION = ['pause-holder-1.5x', 'pause-holder-3x'];
/** The faults that cut a holder off from every server, one each. */
const PARTITIONS = ['partition-holder-both-ways', 'partition-holder-requests-dropped', 'partition-holder-replies-dropped'];

describe('fault suite (reduced: every fault once) on a 3-node ensemble with clients in separate processes', () => {
  it('keeps every lock exclusive, fenced and FIFO through every fault, finishes every waiter, and leaves nothing behind', async () => {
    // FAULTS=name,name runs only those (to chase one failure); a name it does not know is refused.
    // The checks that a fault really produced its case stay for the faults that ran.
    const only = faultsToRun();
    const report = await runFaultSuite({ faults: only, log: (line) => console.log(`[faults] ${line}`) });
    console.log(describeReport(report).map((line) => `[faults] ${line}`).join('\n'));
    expect(report.result.violations).toEqual([]);
    expect(report.leftovers).toEqual({ nodes: [], watches: 0 });
    expect(report.result.figures.acquisitions).toBeGreaterThan(100);
    // The cohort queue (on unless FAULTS_COHORT=off) really handed locks over within processes.
    if (process.env.FAULTS_COHORT !== 'off') expect(report.result.figures.localHandoffs).toBeGreaterThan(0);
    // Holders really handed locks on to the entry watching them.
    expect(report.writeGrants).toBeGreaterThan(0);
    // The paused-past-session faults must really have produced the case they are meant to test.
    if (PAUSED_PAST_SESSION.every((name) => report.faultsRun.includes(name))) {
      expect(report.result.figures.excusedOverlaps).toBeGreaterThan(0);
      expect(report.result.figures.writesRefused).toBeGreaterThan(0);
    } else {
      console.log(`[faults] not checked: excused overlaps and refused writes (FAULTS left out ${PAUSED_PAST_SESSION.filter((name) => !report.faultsRun.includes(name)).join(', ')})`);
    }
    // Each client partition (both ways, each way) that ran cut off a holder, and that holder was told.
    const partitions = report.faultsRun.filter((name) => PARTITIONS.includes(name)).length;
    expect(report.partitions).toEqual({ cut: partitions, holderTold: partitions });
  }, 900_000);
});

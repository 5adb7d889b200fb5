import { describe, expect, it } from 'vitest';
import { describeReport, runFaultSuite } from './suite.js';

describe('fault suite (reduced: every fault once) on a 3-node ensemble with clients in separate processes', () => {
  it('keeps every lock exclusive, fenced and FIFO through every fault, finishes every waiter, and leaves nothing behind', async () => {
    // FAULTS=name,name runs only those (to chase one failure).
    const only = process.env.FAULTS?.split(',').filter(Boolean);
    const report = await runFaultSuite({ faults: only, log: (line) => console.log(`[faults] ${line}`) }).catch((error: unknown) => {
      throw error;
    });
    console.log(describeReport(report).map((line) => `[faults] ${line}`).join('\n'));
    expect(report.result.violations).toEqual([]);
    expect(report.leftovers).toEqual({ nodes: [], watches: 0 });
    expect(report.result.figures.acquisitions).toBeGreaterThan(100);
    // The cohort queue (on unless FAULTS_COHORT=off) really handed locks over within processes.
    if (process.env.FAULTS_COHORT !== 'off') expect(report.result.figures.localHandoffs).toBeGreaterThan(0);
    // Holders really handed locks on to the entry watching them.
    expect(report.writeGrants).toBeGreaterThan(0);
    // The paused-past-session faults must really have produced the case they are meant to test.
    if (!only) {
      expect(report.result.figures.excusedOverlaps).toBeGreaterThan(0);
      expect(report.result.figures.writesRefused).toBeGreaterThan(0);
      // Each client partition (both ways, each way) cut off a holder, and that holder was told.
      expect(report.partitions).toEqual({ cut: 3, holderTold: 3 });
    }
  }, 900_000);
});

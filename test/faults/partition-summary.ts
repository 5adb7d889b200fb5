/** The partition trials' results, per fault and per trial, as the report and the tests read them. */
import type { PartitionFault, TrialResult } from './partition-trials.js';

/** One trial, as the log line the runs print. */
export function describeTrial(r: TrialResult): string {
  const ms = (v: number | undefined): string => (v === undefined ? 'never' : `${Math.round(v)} ms`);
  const again = r.setUpAgain ? ` (set up ${r.setUpAgain + 1} times: H lost its lock before the fault)` : '';
  return `${r.fault} ${r.kind}: H told ${ms(r.holderToldMs)} (${r.reason ?? '-'}), W granted ${ms(r.otherGrantedMs)}${r.unsafe ? '  UNSAFE' : ''}${again}`;
}

export interface FaultSummary {
  readonly fault: PartitionFault;
  readonly trials: number;
  /** Trials where W was granted before H was told (the goal: 0). */
  readonly unsafe: number;
  /** Trials where W was granted within the trial. */
  readonly granted: number;
  /** Smallest (W granted − H told) over trials where W was granted, ms. */
  readonly smallestMarginMs: number | undefined;
  /** Largest time from the fault to H being told, ms. */
  readonly slowestToldMs: number | undefined;
}

export function summarize(results: readonly TrialResult[]): FaultSummary[] {
  const faults = [...new Set(results.map((r) => r.fault))];
  return faults.map((fault) => {
    const mine = results.filter((r) => r.fault === fault);
    const margins = mine.filter((r) => r.otherGrantedMs !== undefined && r.holderToldMs !== undefined).map((r) => r.otherGrantedMs! - r.holderToldMs!);
    const told = mine.filter((r) => r.holderToldMs !== undefined).map((r) => r.holderToldMs!);
    return {
      fault,
      trials: mine.length,
      unsafe: mine.filter((r) => r.unsafe).length,
      granted: mine.filter((r) => r.otherGrantedMs !== undefined).length,
      smallestMarginMs: margins.length ? Math.min(...margins) : undefined,
      slowestToldMs: told.length ? Math.max(...told) : undefined,
    };
  });
}

/** The partition trials' results, per fault and per trial, as the report and the tests read them. */
import type { PartitionFault, TrialResult } from './partition-trials.js';

/** One trial, as the log line the runs print. */
export function describeTrial(r: TrialResult): string {
  const ms = (v: number | undefined): string => (v === undefined ? 'never' : `${Math.round(v)} ms`);
  const again = r.setUpAgain ? ` (set up ${r.setUpAgain + 1} times: H lost its lock before the fault)` : '';
  const restarted = r.membersRestarted ? ` (${r.membersRestarted} member${r.membersRestarted === 1 ? '' : 's'} restarted before it: slow to serve again after the last fault)` : '';
  return `${r.fault} ${r.kind}: H told ${ms(r.holderToldMs)} (${r.reason ?? '-'}), W granted ${ms(r.otherGrantedMs)}${r.unsafe ? '  UNSAFE' : ''}${again}${restarted}`;
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

/**
 * The set-ups the trials needed again, as a sentence ('' for none): trials set up anew because H lost
 * its lock before the fault, and ensemble members restarted because they were slow to serve again.
 */
export function describeSetUps(results: readonly TrialResult[]): string {
  const again = results.filter((r) => r.setUpAgain > 0);
  const times = again.reduce((n, r) => n + r.setUpAgain, 0);
  const restarted = results.reduce((n, r) => n + r.membersRestarted, 0);
  const parts = [
    again.length === 0
      ? ''
      : ` ${again.length} trial${again.length === 1 ? ' was' : 's were'} set up again${times === again.length ? '' : ` (${times} times in all)`} because H lost its lock before the fault was injected (its lease ran out on the busy machine).`,
    restarted === 0 ? '' : ` ${restarted} ensemble member${restarted === 1 ? ' was' : 's were'} restarted before a trial, not serving again 30 s after the last fault.`,
  ];
  return parts.join('');
}

import { describe, expect, it } from 'vitest';
import { describeSetUps } from '../faults/partition-summary.js';
import type { TrialResult } from '../faults/partition-trials.js';
import { faultsToRun, partitionTrials } from '../faults/run-options.js';

describe('the fault runs refuse settings that would drop their checks', () => {
  it('PARTITION_TRIALS: a whole number of at least 1; 0, a negative, a fraction or a word are refused', () => {
    expect(partitionTrials(2, undefined)).toBe(2);
    expect(partitionTrials(2, '')).toBe(2);
    expect(partitionTrials(2, '5')).toBe(5);
    for (const bad of ['0', '-1', '1.5', 'many']) {
      expect(() => partitionTrials(2, bad), bad).toThrow(new RegExp(`^PARTITION_TRIALS=${bad.replace('.', '\\.')}: give a whole number of trials of each fault, at least 1 .*assert nothing`));
    }
  });

  it('FAULTS: names of the fault suite, checked; a misspelt or empty list is refused, naming the known faults', () => {
    expect(faultsToRun(undefined)).toBeUndefined();
    expect(faultsToRun('kill-leader, pause-holder-3x')).toEqual(['kill-leader', 'pause-holder-3x']);
    expect(() => faultsToRun('kill-leadr')).toThrow(/^FAULTS=kill-leadr: no fault called kill-leadr; name some of kill-leader, kill-follower, .*or unset it/);
    expect(() => faultsToRun(',')).toThrow(/^FAULTS=,: no fault named; name some of /);
  });

  it('the partition report counts the set-ups made again: trials whose holder lost its lock early, and members restarted', () => {
    const trial = (setUpAgain: number, membersRestarted: number): TrialResult => ({
      fault: 'kill-leader',
      kind: 'exclusive',
      holderToldMs: 1,
      otherGrantedMs: 2,
      unsafe: false,
      reason: 'lease-expired',
      setUpAgain,
      membersRestarted,
    });
    expect(describeSetUps([trial(0, 0)])).toBe('');
    expect(describeSetUps([trial(2, 0), trial(0, 1), trial(0, 1)])).toBe(
      ' 1 trial was set up again (2 times in all) because H lost its lock before the fault was injected (its lease ran out on the busy machine).' +
        ' 2 ensemble members were restarted before a trial, not serving again 30 s after the last fault.',
    );
  });
});

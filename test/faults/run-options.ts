/**
 * The fault runs' settings from the environment, checked: a value that would quietly drop the
 * runs' checks (no trials at all, a fault name misspelt) is refused, saying what to write.
 */
import { FAULTS } from './faults.js';

/**
 * PARTITION_TRIALS: trials of each fault, a whole number of at least 1 (`fallback` when unset).
 * @throws Error for anything else: 0 trials would assert nothing
 */
export function partitionTrials(fallback: number, value = process.env.PARTITION_TRIALS): number {
  if (value === undefined || value === '') return fallback;
  const trials = Number(value);
  if (!Number.isInteger(trials) || trials < 1) {
    throw new Error(`PARTITION_TRIALS=${value}: give a whole number of trials of each fault, at least 1 (unset, ${fallback}); with none the run would assert nothing`);
  }
  return trials;
}

/**
 * FAULTS: the faults of the fault suite to run (undefined when unset: every one), each a name of
 * FAULTS in faults.ts.
 * @throws Error naming the unknown names and the known ones
 */
export function faultsToRun(value = process.env.FAULTS): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(name in FAULTS));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`FAULTS=${value}: ${names.length === 0 ? 'no fault named' : `no fault called ${unknown.join(', ')}`}; name some of ${Object.keys(FAULTS).join(', ')}, comma-separated, or unset it to run every one`);
  }
  return names;
}

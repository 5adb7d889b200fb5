/** Small statistics for the benchmark: percentiles of samples, medians and spread of rounds. */

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** One figure measured over several rounds: the median is reported, min and max show the noise. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  rounds: number[];
}

export function figure(rounds: readonly number[]): Figure {
  const finite = rounds.filter((r) => Number.isFinite(r));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, rounds: [...rounds] };
  return { median: medianOf(finite), min: Math.min(...finite), max: Math.max(...finite), rounds: [...rounds] };
}

/** The true median (mean of the two middle values for an even count). */
function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** (max - min) / median, as a percentage: how much the rounds disagreed. */
export function spreadPercent(f: Figure): number {
  return f.median === 0 ? 0 : ((f.max - f.min) / Math.abs(f.median)) * 100;
}

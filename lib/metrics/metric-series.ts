/** The series LockMetrics keeps, and their lines in Prometheus text exposition format. */

/** A histogram's state, in seconds. */
export interface HistogramSnapshot {
  /** Cumulative, as Prometheus counts them: observations <= `le` (the last `le` is Infinity). */
  readonly buckets: ReadonlyArray<{ readonly le: number; readonly count: number }>;
  readonly count: number;
  /** Sum of the observations, in seconds. */
  readonly sum: number;
}

/** A label value, escaped as the text format asks (backslash, quote, newline). */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The HELP and TYPE lines of a metric. */
export function header(lines: string[], name: string, help: string, type: string): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/** A counter, per rendered label set (`mode="write"`). */
export class Counter {
  private readonly values = new Map<string, number>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    /** An unlabelled counter shows 0 before its first count; a labelled one has no series yet. */
    private readonly labelled = true,
  ) {}

  inc(labels: string): void {
    this.values.set(labels, (this.values.get(labels) ?? 0) + 1);
  }

  total(): number {
    let sum = 0;
    for (const value of this.values.values()) sum += value;
    return sum;
  }

  write(lines: string[], prefix: string): void {
    const name = prefix + this.name;
    header(lines, name, this.help, 'counter');
    if (this.values.size === 0 && !this.labelled) lines.push(`${name} 0`);
    for (const [labels, value] of this.values) lines.push(`${name}${labels ? `{${labels}}` : ''} ${value}`);
  }
}

/** A histogram, per rendered label set; counts per bucket (not cumulative) plus the overflow. */
export class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number }>();

  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(labels: string, seconds: number): void {
    let entry = this.series.get(labels);
    if (!entry) {
      entry = { counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0 };
      this.series.set(labels, entry);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i += 1;
    entry.counts[i]! += 1;
    entry.sum += seconds;
  }

  snapshot(): HistogramSnapshot {
    const counts = new Array<number>(this.bounds.length + 1).fill(0);
    let sum = 0;
    for (const entry of this.series.values()) {
      entry.counts.forEach((count, i) => (counts[i]! += count));
      sum += entry.sum;
    }
    return this.cumulative(counts, sum);
  }

  write(lines: string[], prefix: string): void {
    const name = prefix + this.name;
    header(lines, name, this.help, 'histogram');
    for (const [labels, entry] of this.series) {
      const { buckets, count, sum } = this.cumulative(entry.counts, entry.sum);
      for (const bucket of buckets) lines.push(`${name}_bucket{${labels},le="${bucket.le === Infinity ? '+Inf' : bucket.le}"} ${bucket.count}`);
      lines.push(`${name}_sum{${labels}} ${sum}`, `${name}_count{${labels}} ${count}`);
    }
  }

  private cumulative(counts: readonly number[], sum: number): HistogramSnapshot {
    let running = 0;
    const buckets = counts.map((count, i) => ({ le: this.bounds[i] ?? Infinity, count: (running += count) }));
    return { buckets, count: running, sum };
  }
}

/**
 * The capacity model of docs/benchmarks.md, computed from one run's own figures: the ensemble's
 * measured write throughput (`ensemble-writes`, the highest row per ensemble size) divided by the
 * measured write transactions per lock operation of each implementation (the leader's proposals in
 * `ensemble-uncontended`, `ensemble-sessions` and `ensemble-cohort-mix`). What it gives is an upper
 * bound: the lock operations per second the ensemble could commit if it did nothing else.
 */
import { formatNumber, type Row, type WorkloadResult } from './report.js';
import { type Figure, figure } from './stats.js';

/** Where each row's write transactions per operation are measured: workload, row, what one operation is. */
const SOURCES: [string, string, string][] = [
  ['ensemble-uncontended', 'Curator InterProcessMutex', 'Curator: acquire + release, uncontended'],
  ['ensemble-uncontended', 'ours: LockService acquire+release', 'ours: acquire + release, uncontended'],
  ['ensemble-sessions', 'Curator InterProcessMutex', 'Curator: a handoff, one caller per process'],
  ['ensemble-sessions', 'ours: LockService', 'ours: a handoff, one caller per process'],
  ['ensemble-cohort-mix', 'Curator InterProcessMutex', 'Curator: a handoff, 16 threads per process'],
  ['ensemble-cohort-mix', 'ours: LockService, cohort: false', 'ours, cohort: false: a handoff, 16 callers per process'],
  ['ensemble-cohort-mix', 'ours: LockService', 'ours (cohort queue): a handoff, 16 callers per process'],
];

const isFigure = (cell: unknown): cell is Figure => typeof cell === 'object' && cell !== null && 'median' in cell;

/** The highest write rate per ensemble size, from the `ensemble-writes` rows ("3 nodes: ..."). */
function writeRates(writes: WorkloadResult): Map<number, number> {
  const best = new Map<number, number>();
  for (const row of writes.rows) {
    const size = Number(/^(\d+) nodes:/.exec(row.subject)?.[1]);
    const rate = row.cells.rate;
    if (Number.isFinite(size) && isFigure(rate)) best.set(size, Math.max(best.get(size) ?? 0, rate.median));
  }
  return best;
}

export function capacityModel(results: readonly WorkloadResult[]): WorkloadResult | undefined {
  const writes = results.find((r) => r.id === 'ensemble-writes');
  if (!writes) return undefined;
  const rates = writeRates(writes);
  const sizes = [...rates.keys()].sort();
  const rows: Row[] = [];
  for (const [id, subject, label] of SOURCES) {
    const txns = results.find((r) => r.id === id)?.rows.find((row) => row.subject === subject)?.cells.txns;
    if (!isFigure(txns)) continue;
    rows.push({
      subject: label,
      cells: {
        txns,
        ...Object.fromEntries(sizes.map((size) => [`ops${size}`, figure([rates.get(size)! / txns.median])])),
        source: id,
      },
    });
  }
  if (rows.length === 0) return undefined;
  return {
    id: 'capacity-model',
    title: 'Capacity model: lock operations per second that the measured write throughput allows (upper bounds)',
    columns: [
      { key: 'txns', label: 'write txns/operation (measured)', digits: 2 },
      ...sizes.map((size) => ({ key: `ops${size}`, label: `operations/s, ${size} nodes`, digits: 0 })),
      { key: 'source', label: 'txns measured in' },
    ],
    rows,
    checks: [],
    notes: [
      `operations/s = the ensemble's highest measured write rate (${sizes.map((size) => `${size} nodes: ${formatNumber(rates.get(size)!)} write txns/s`).join('; ')}, from ensemble-writes) / the write transactions per operation measured by the leader in the workload named; an upper bound, if the ensemble did nothing else. All servers and clients shared this machine's cores: what carries over to an ensemble on separate machines is in docs/benchmarks.md, "Capacity model".`,
    ],
    details: { writeRates: Object.fromEntries(rates) },
  };
}

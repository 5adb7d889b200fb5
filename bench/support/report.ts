/**
 * What a workload reports, and how it is printed: a table per workload (a row per implementation,
 * a column per metric, each figure the median of the rounds with their spread), the targets it was
 * checked against, and notes. The same data goes to the console, to bench/results/latest.json and
 * to the generated part of docs/benchmarks.md.
 */
import { type Figure, spreadPercent } from './stats.js';

export type Cell = number | string | Figure | undefined;

export interface Column {
  key: string;
  label: string;
  /** Digits after the point. @default 0 */
  digits?: number;
  /** Printed with an `x` after it. */
  ratio?: boolean;
}

export interface Row {
  subject: string;
  cells: Record<string, Cell>;
}

export interface Check {
  /** What the target says, e.g. "uncontended p50 <= 1.10x the raw-client floor". */
  target: string;
  /** The measured figure, as printed. */
  measured: string;
  /** undefined: could not be measured in this run (a baseline missing, a workload skipped). */
  met: boolean | undefined;
}

export interface WorkloadResult {
  id: string;
  title: string;
  columns: Column[];
  rows: Row[];
  checks: Check[];
  notes: string[];
  /** Everything else worth keeping in the JSON (per-round figures, settings). */
  details?: unknown;
}

function isFigure(cell: Cell): cell is Figure {
  return typeof cell === 'object' && cell !== null && 'median' in cell;
}

export function formatNumber(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatCell(cell: Cell, column: Column): string {
  if (cell === undefined) return '-';
  if (typeof cell === 'string') return cell;
  const value = isFigure(cell) ? cell.median : cell;
  let text = formatNumber(value, column.digits ?? 0);
  if (column.ratio && Number.isFinite(value)) text += 'x';
  if (isFigure(cell) && cell.rounds.length > 1 && Number.isFinite(value)) {
    const spread = spreadPercent(cell);
    if (spread >= 0.5) text += ` ±${formatNumber(spread / 2, 0)}%`;
  }
  return text;
}

export function checkMark(check: Check): string {
  return check.met === undefined ? 'not measured' : check.met ? 'met' : 'MISSED';
}

/** Plain-text table for the console. */
export function formatText(result: WorkloadResult): string {
  const header = ['', ...result.columns.map((c) => c.label)];
  const body = result.rows.map((row) => [row.subject, ...result.columns.map((c) => formatCell(row.cells[c.key], c))]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((line) => line[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const out = [`== ${result.title}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
  for (const check of result.checks) out.push(`  [${checkMark(check)}] ${check.target}: ${check.measured}`);
  for (const note of result.notes) out.push(`  note: ${note}`);
  return out.join('\n');
}

/** Markdown table for docs/benchmarks.md (the targets are listed once, above all tables). */
export function formatMarkdown(result: WorkloadResult): string {
  const escape = (text: string): string => text.replace(/\|/g, '\\|');
  const header = `| | ${result.columns.map((c) => escape(c.label)).join(' | ')} |`;
  const align = `|---|${result.columns.map(() => '---:').join('|')}|`;
  const body = result.rows.map(
    (row) => `| ${escape(row.subject)} | ${result.columns.map((c) => escape(formatCell(row.cells[c.key], c))).join(' | ')} |`,
  );
  const out = [`#### ${result.title}`, '', header, align, ...body, ''];
  for (const note of result.notes) out.push(`- ${note}`);
  return out.join('\n');
}

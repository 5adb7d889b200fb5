/**
 * One run of the fault suite: a 3-node ensemble, clients in their own processes, a list of faults
 * (each once, or at random until enough acquisitions were made), then the checker's verdict and the
 * figures.
 */
import { startZkEnsemble } from '../support/zk-server.js';
import type { TlsZooKeeper } from '../support/zk-tls-servers.js';
import type { CheckResult } from './checker.js';
import { FAULTS, inject } from './faults.js';
import { FaultHarness, type HarnessOptions, type Leftovers } from './harness.js';

export interface SuiteOptions extends Partial<HarnessOptions> {
  /** Faults to inject in this order; default: every fault once. */
  readonly faults?: readonly string[];
  /** Soak: keep injecting random faults until the clients made this many acquisitions... */
  readonly minAcquisitions?: number;
  /** ...and this many faults were injected in all. */
  readonly minFaults?: number;
  /** Quiet time between faults, ms. */
  readonly settleMs?: number;
  readonly log?: (line: string) => void;
  /** The clients connect over TLS to these servers' secure ports (the caller removes it); default plain TCP. */
  readonly tls?: TlsZooKeeper;
}

export interface SuiteReport {
  readonly result: CheckResult;
  readonly leftovers: Leftovers;
  readonly faultsRun: string[];
  readonly durationMs: number;
  /** Releases that granted by write (QueueGrant.grantByWrite), by the clients that finished (a killed one cannot tell). */
  readonly writeGrants: number;
  /** Client partitions injected, and in how many the partitioned holder was told it lost its lock. */
  readonly partitions: { readonly cut: number; readonly holderTold: number };
}

export const DEFAULT_OPTIONS: HarnessOptions = {
  clients: 5,
  resources: { a: ['exclusive'], b: ['read', 'write', 'read', 'read'], c: ['exclusive', 'write', 'read'] },
  sessionTimeoutMs: 2000,
  waitTimeoutMs: 12_000,
  holdMs: 6,
  thinkMs: 4,
  seed: 20261121,
  // Several callers per process, so that the cohort queue hands locks over locally; tight bounds so
  // that it also gives them back to ZooKeeper often. FAULTS_COHORT=off runs without it.
  callers: 3,
  cohort: process.env.FAULTS_COHORT === 'off' ? false : { maxHandoffs: 4, maxHoldMs: 20 },
};

export async function runFaultSuite(options: SuiteOptions = {}): Promise<SuiteReport> {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const { tls } = options;
  const ensemble = await (tls ? tls.startEnsemble(3) : startZkEnsemble(3));
  const harness = new FaultHarness(ensemble, { ...DEFAULT_OPTIONS, ...stripUndefined(options) }, tls?.side);
  const faultsRun: string[] = [];
  try {
    await harness.start();
    await sleep(1000);
    const settle = options.settleMs ?? 500;
    const run = async (name: string): Promise<void> => {
      log(`fault: ${name} (${harness.events.filter((e) => e.type === 'granted').length} acquisitions so far)`);
      await withTimeout(inject(harness, name), 120_000, `fault ${name} did not complete within 120 s`);
      faultsRun.push(name);
      await sleep(settle);
    };
    for (const name of options.faults ?? Object.keys(FAULTS)) await run(name);
    if (options.minAcquisitions) {
      let seed = harness.options.seed;
      const names = Object.keys(FAULTS);
      for (;;) {
        const acquisitions = harness.events.filter((e) => e.type === 'granted').length;
        log(`acquisitions so far: ${acquisitions}`);
        if (acquisitions >= options.minAcquisitions && faultsRun.length >= (options.minFaults ?? 0)) break;
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        // The high bits: the low ones of this generator (in doubles, which also round the product)
        // repeat so soon that with 18 faults only every other one was ever picked.
        await run(names[Math.floor((seed / 2 ** 31) * names.length)]!);
      }
    }
    log(`injector actions: ${harness.actions.filter((a) => !a.action.startsWith('fault:')).map((a) => `${a.action}${a.target ? ` ${a.target}` : ''}`).join(', ')}`);
    const { result, leftovers, writeGrants } = await harness.finish();
    return { result, leftovers, faultsRun, durationMs: performance.now() - started, writeGrants, partitions: partitionsOf(harness) };
  } catch (error) {
    log(`failed; injector actions: ${harness.actions.map((a) => `${a.action}${a.target ? ` ${a.target}` : ''}`).join(', ')}`);
    throw error;
  } finally {
    await ensemble.stop();
  }
}

/**
 * The client partitions, and in how many the partitioned client heard of a lost lock between the
 * cut and one session timeout after the heal (it held one when cut: the fault waits for that).
 */
function partitionsOf(harness: FaultHarness): SuiteReport['partitions'] {
  const { actions, events } = harness;
  const cuts = actions.filter((a) => a.action === 'partition-client');
  const told = cuts.filter((cut) => {
    const healed = actions.find((a) => a.action === 'heal-client' && a.target === cut.target && a.t >= cut.t)?.t ?? Infinity;
    return events.some((e) => e.type === 'lost' && e.client === cut.target && e.t >= cut.t && e.t <= healed + harness.options.sessionTimeoutMs);
  });
  return { cut: cuts.length, holderTold: told.length };
}

/** The figures, as the lines the suite prints. */
export function describeReport(report: SuiteReport): string[] {
  const { figures, violations } = report.result;
  const stats = (values: number[]): string =>
    values.length === 0 ? 'none observed' : `max ${Math.round(Math.max(...values))} ms, median ${Math.round(median(values))} ms (${values.length})`;
  return [
    `faults injected:        ${figures.faults} (${report.faultsRun.length} scenarios)`,
    `acquisitions:           ${figures.acquisitions} (timeouts ${figures.timeouts}, failures ${figures.failures}; ${figures.localHandoffs} handed over within a process by its cohort)`,
    `releases granting by write: ${report.writeGrants} (by the clients that finished)`,
    `fenced writes:          ${figures.writesAccepted} accepted, ${figures.writesRefused} refused (stale holders)`,
    `overlaps:               ${violations.filter((v) => v.endsWith(' at once')).length} (must be 0)`,
    `excused overlaps:       ${figures.excusedOverlaps} (holders paused past their session)`,
    `client partitions:      ${report.partitions.cut} (the holder told it lost its lock in ${report.partitions.holderTold})`,
    `lost-signal delay:      ${stats(figures.lostSignalDelaysMs)} after SIGCONT`,
    `takeover after crash:   ${stats(figures.takeoversMs)} from kill or pause to the next grant`,
    `leftovers:              ${report.leftovers.nodes.length} nodes, ${report.leftovers.watches} watches`,
    `violations:             ${violations.length}`,
    ...violations.slice(0, 20).map((v) => `  - ${v}`),
    `duration:               ${(report.durationMs / 1000).toFixed(1)} s`,
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

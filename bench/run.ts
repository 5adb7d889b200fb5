/**
 * `npm run bench`: starts its own ZooKeeper (data on tmpfs when the machine has /dev/shm; a second
 * one on disk for the uncontended workload; a 3-node ensemble on disk for the ensemble-* workloads,
 * only when one of them is selected), prepares the Curator baseline, runs the selected
 * workloads, prints a table per workload, writes bench/results/latest.json and, for a full run,
 * the generated part of docs/benchmarks.md. Every server and worker it started is stopped however it
 * ends, Ctrl-C included.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { cpus, loadavg, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startZkEnsemble, startZkServer, type ZkEnsemble, type ZkServer } from '../test/support/zk-server.js';
import { parseArgs, USAGE } from './support/args.js';
import { capacityModel } from './support/capacity.js';
import { killAllChildren } from './support/children.js';
import { connectedWorker, stopWorkers, type BenchContext } from './support/context.js';
import { prepareCurator, type CuratorSetup } from './support/curator.js';
import { describeMachine } from './support/machine.js';
import { updateMarkdown } from './support/markdown.js';
import { checkMark, formatText, type WorkloadResult } from './support/report.js';
import { assertOnDisk, type EnsembleTarget, ensembleTarget } from './support/target.js';
import { WORKLOADS } from './workloads/index.js';

const here = dirname(fileURLToPath(import.meta.url));
/** build/bench/run.js -> the repository root */
const repoRoot = resolve(here, '../..');
const buildDir = resolve(here, '..');

/** ZooKeeper's session timeout is at most 20 ticks: 6 s ticks allow 120 s sessions, which ping every 40 s. */
const TICK_MS = 6000;
const SESSION_TIMEOUT_MS = 20 * TICK_MS;
/** A server tuned like a production one rather than like the tests' (those stop JIT at C1 to start fast). */
const SERVER_JVM_FLAGS = ['-Xms512m', '-Xmx512m'];
/** ZooKeeper's own default: empty lock parents are reaped once a minute, not every 200 ms as in the tests. */
const CONTAINER_CHECK_MS = 60_000;
/** The herd and heap workloads open more than the default 60 connections from 127.0.0.1. */
const SERVER_CONFIG = ['maxClientCnxns=0'];

const servers: ZkServer[] = [];
const ensembles: ZkEnsemble[] = [];

/**
 * The ensemble workloads' servers: 3 members (5 for one row of ensemble-writes) on loopback, data directory and transaction log (the
 * same directory) under `dataDirParent`, which must be a disk; ZooKeeper's default forceSync=yes
 * fsyncs the log before every acknowledgement, as production does.
 */
async function startEnsemble(dataDirParent: string, size: number): Promise<ZkEnsemble> {
  assertOnDisk(dataDirParent);
  const ensemble = await startZkEnsemble(size, {
    tickMs: TICK_MS,
    dataDirParent,
    jvmFlags: SERVER_JVM_FLAGS,
    containerCheckIntervalMs: CONTAINER_CHECK_MS,
    extraConfig: SERVER_CONFIG,
    startTimeoutMs: 60_000,
  });
  ensembles.push(ensemble);
  return ensemble;
}

async function startServer(dataDirParent: string): Promise<ZkServer> {
  const server = await startZkServer({
    tickMs: TICK_MS,
    dataDirParent,
    jvmFlags: SERVER_JVM_FLAGS,
    containerCheckIntervalMs: CONTAINER_CHECK_MS,
    extraConfig: SERVER_CONFIG,
  });
  servers.push(server);
  return server;
}

let stopping = false;
async function stopEverything(): Promise<void> {
  killAllChildren();
  await Promise.allSettled([...servers.map((s) => s.stop()), ...ensembles.map((e) => e.stop())]);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\nbench: ${signal}: stopping every server and worker...`);
    void stopEverything().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const w of WORKLOADS) console.log(`${w.id.padEnd(21)} ${w.description}${w.pending ? `\n${''.padEnd(21)} PENDING: ${w.pending}` : ''}`);
    return 0;
  }
  const unknown = (args.only ?? []).filter((id) => !WORKLOADS.some((w) => w.id === id));
  if (unknown.length > 0) throw new Error(`unknown workload(s) ${unknown.join(', ')}; known: ${WORKLOADS.map((w) => w.id).join(', ')}\n${USAGE}`);
  if (args.waitQuietMinutes > 0) await waitForQuiet(args.waitQuietMinutes);
  const picked = WORKLOADS.filter((w) => !args.only || args.only.includes(w.id));
  const pending = picked.filter((w) => w.pending);
  for (const w of pending) console.error(`bench: ${w.id} is pending, not run: ${w.pending}`);
  const selected = picked.filter((w) => !w.pending);
  const started = Date.now();

  let curator: CuratorSetup | undefined;
  let curatorMissing: string | undefined;
  if (args.curator) {
    const prepared = prepareCurator(repoRoot, buildDir);
    if ('missing' in prepared) {
      curatorMissing = prepared.missing;
      console.error(`bench: running WITHOUT the Curator baseline: ${curatorMissing}`);
    } else curator = prepared;
  } else curatorMissing = 'skipped with --no-curator';

  const shm = '/dev/shm';
  const tmpfs = existsSync(shm);
  const serverStorage = tmpfs ? 'tmpfs (/dev/shm)' : `disk (${tmpdir()}; no /dev/shm on this machine)`;
  const log = (message: string): void => console.error(`bench: ${message}`);
  log(`starting ZooKeeper, data on ${serverStorage}`);
  const server = await startServer(tmpfs ? shm : tmpdir());
  let disk: Promise<ZkServer> | undefined;
  let ensemble: Promise<EnsembleTarget> | undefined;
  let ensembleInfo: Record<string, unknown> | undefined;
  // Debian's ZooKeeper 3.8.0 sometimes starts an ensemble in which the follower serving a client
  // never applies one committed transaction (logged, all its threads idle, the other members past
  // it): that client's next request hangs until its session's receive timeout. Seen within the
  // first few thousand cycles of an ensemble when it happens at all, and reproduced with the raw
  // client alone, so the warm-up doubles as a gate: an ensemble that stalls in it is replaced (see
  // docs/benchmarks.md).
  const gatedEnsemble = async (size: number): Promise<{ target: EnsembleTarget; replaced: number }> => {
    for (let attempt = 1; ; attempt++) {
      log(`starting a ${size}-node ZooKeeper ensemble, data and transaction log on disk (${tmpdir()}), fsync on`);
      const started = await startEnsemble(tmpdir(), size);
      const target = await ensembleTarget(started, `disk (${tmpdir()})`);
      log(`ensemble up: leader is server ${target.leaderId}; warming it up`);
      const warm = await connectedWorker(ctx, target, 'raw-pipelined', 'ensemble-warm-up');
      try {
        await warm.ask({ name: 'uncontended', path: '/bench-ensemble-warm-up', cycles: args.quick ? 100 : 3000 }, 30_000);
        return { target, replaced: attempt - 1 };
      } catch (error) {
        if (attempt >= 3) throw error;
        log(`the ensemble stalled in its warm-up (${error instanceof Error ? error.message.split('\n')[0] : String(error)}): replacing it`);
        await started.stop();
      } finally {
        await stopWorkers([warm]);
      }
    }
  };
  const ctx: BenchContext = {
    quick: args.quick,
    repoRoot,
    buildDir,
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    curator,
    curatorMissing,
    server,
    serverStorage,
    diskServer: () => {
      // /tmp here is on the root disk; a machine whose /tmp is tmpfs needs TMPDIR pointed at a disk.
      disk ??= (log(`starting a second ZooKeeper, data on disk (${tmpdir()})`), startServer(tmpdir()));
      return disk;
    },
    ensemble: () => {
      ensemble ??= gatedEnsemble(3).then(({ target, replaced }) => {
        ensembleInfo = {
          members: 3,
          storage: target.storage,
          forceSync: 'yes (ZooKeeper default)',
          leader: target.leaderId,
          connectString: target.connectString,
          replacedAfterStalling: replaced,
        };
        return target;
      });
      return ensemble;
    },
    otherEnsemble: async (size) => (await gatedEnsemble(size)).target,
    log,
  };
  const reported = (await server.fourLetter('srvr')).match(/Zookeeper version: ([0-9.]+)/)?.[1] ?? 'unknown version';
  const debian = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'zookeeper'], { encoding: 'utf8' }).stdout?.trim();
  const zookeeperVersion = debian ? `${reported} (Debian ${debian})` : reported;
  // The C client's sources ship in native/ (as the zookeeper npm package 7.3.0 carries them); that package is no dependency.
  const clientVersion = '7.3.0';
  // The machine is shared: a busy start is worth a warning, and the load during the run is recorded.
  const busyPercent = await cpuBusyPercent(1000);
  const busy = busyPercent > 25;
  if (busy) {
    console.error(
      `bench: WARNING: the CPUs were ${busyPercent.toFixed(0)}% busy before anything started: something else is running, ` +
        'and the figures will be noisy and not comparable.',
    );
  }
  let loadMax = loadavg()[0]!;
  const loadSampler = setInterval(() => (loadMax = Math.max(loadMax, loadavg()[0]!)), 5000);
  loadSampler.unref();
  const machine = describeMachine(zookeeperVersion, curator?.version ?? `not run: ${curatorMissing}`, `the C client (3.8.0) from zookeeper ${clientVersion} (npm), through nestjs-zk-lock's addon (native/)`);

  // The server's JIT warms up before anything is measured, whichever workloads were picked.
  log('warming the server up');
  const warm = await connectedWorker(ctx, server, 'raw-pipelined', 'server-warm-up');
  try {
    await warm.ask({ name: 'uncontended', path: '/bench-server-warm-up', cycles: args.quick ? 300 : 10_000 });
  } finally {
    await stopWorkers([warm]);
  }

  const results: WorkloadResult[] = [];
  const failures: { id: string; error: string }[] = [];
  for (const workload of selected) {
    log(`== ${workload.id}`);
    const t0 = Date.now();
    try {
      const result = await workload.run(ctx);
      results.push(result);
      console.log(`\n${formatText(result)}\n`);
      log(`${workload.id} took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    } catch (error) {
      if (stopping) break; // interrupted: the workers were killed under it
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push({ id: workload.id, error: text });
      console.error(`bench: workload ${workload.id} FAILED:\n${text}`);
    }
  }

  // Computed from the figures above (the ensemble's write rate over each recipe's writes per operation).
  const capacity = capacityModel(results);
  if (capacity) {
    results.push(capacity);
    console.log(`\n${formatText(capacity)}\n`);
  }

  const checks = results.flatMap((r) => r.checks.map((c) => ({ workload: r.id, ...c })));
  console.log('== Targets');
  for (const check of checks) console.log(`  [${checkMark(check)}] ${check.workload}: ${check.target}: ${check.measured}`);
  for (const failure of failures) console.log(`  [FAILED] ${failure.id}: the workload did not complete`);

  clearInterval(loadSampler);
  // An interrupted run writes nothing: the last complete results stay.
  if (stopping) return 130;
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const report = {
    generatedAt: new Date().toISOString(),
    command,
    quick: args.quick,
    workloadsRun: selected.map((w) => w.id),
    workloadsPending: pending.map((w) => ({ id: w.id, why: w.pending })),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    /** Highest 1-minute load average seen during the run (the benchmark's own processes count too). */
    loadMax: Math.round(loadMax * 100) / 100,
    /** How busy the CPUs were, over one second, just before the workloads (our idle server running). */
    cpuBusyAtStartPercent: Math.round(busyPercent),
    startedBusy: busy,
    server: {
      storage: serverStorage,
      tickMs: TICK_MS,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      jvmFlags: SERVER_JVM_FLAGS,
      containerCheckIntervalMs: CONTAINER_CHECK_MS,
      config: SERVER_CONFIG,
    },
    /** The ensemble-* workloads' servers, when one of them ran. */
    ensemble: ensembleInfo,
    results,
    failures,
  };
  const resultsDir = join(repoRoot, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const jsonPath = join(resultsDir, 'latest.json');
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote ${jsonPath}`);
  const fullRun = !args.quick && !args.only && args.curator;
  if (args.writeMarkdown ?? fullRun) {
    const mdPath = join(repoRoot, 'docs/benchmarks.md');
    updateMarkdown(mdPath, report);
    log(`wrote the results section of ${mdPath}`);
  }
  log(`done in ${report.durationSeconds} s`);
  return failures.length > 0 ? 1 : 0;
}

/** Waits until the CPUs have been under 15% busy for 10 s in a row, or gives up after `minutes`. */
async function waitForQuiet(minutes: number): Promise<void> {
  const deadline = Date.now() + minutes * 60_000;
  let quietSince: number | undefined;
  console.error('bench: waiting for a quiet machine...');
  while (Date.now() < deadline) {
    const busy = await cpuBusyPercent(1000);
    if (busy < 15) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= 10_000) return;
    } else quietSince = undefined;
  }
  console.error(`bench: the machine did not become quiet within ${minutes} min; running anyway`);
}

/** Share of CPU time not idle, all cores, over `ms`. */
async function cpuBusyPercent(ms: number): Promise<number> {
  const sample = (): { idle: number; total: number } =>
    cpus().reduce(
      (acc, cpu) => {
        const t = cpu.times;
        return { idle: acc.idle + t.idle, total: acc.total + t.user + t.nice + t.sys + t.idle + t.irq };
      },
      { idle: 0, total: 0 },
    );
  const a = sample();
  await new Promise((r) => setTimeout(r, ms));
  const b = sample();
  const total = b.total - a.total;
  return total > 0 ? (1 - (b.idle - a.idle) / total) * 100 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
} finally {
  if (!stopping) await stopEverything();
}
process.exit(code);

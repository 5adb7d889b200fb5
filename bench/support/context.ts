/** What every workload gets from the runner. */
import { join } from 'node:path';
import type { ZkServer } from '../../test/support/zk-server.js';
import { LineWorker } from './children.js';
import { type CuratorSetup, startCuratorWorker } from './curator.js';
import type { Command } from './protocol.js';

export interface BenchContext {
  readonly quick: boolean;
  readonly repoRoot: string;
  readonly buildDir: string;
  /** Requested by every client; the server's maximum (20 ticks), so idle sessions seldom ping. */
  readonly sessionTimeoutMs: number;
  /** The Curator baseline, or undefined with the reason in curatorMissing. */
  readonly curator: CuratorSetup | undefined;
  readonly curatorMissing: string | undefined;
  /** The main server: data directory on tmpfs when the machine has /dev/shm. */
  readonly server: ZkServer;
  readonly serverStorage: string;
  /** A second server with its data directory on disk, started on first use. */
  diskServer(): Promise<ZkServer>;
  log(message: string): void;
}

export type NodeImpl =
  | 'raw-pipelined'
  | 'raw-sequential'
  | 'raw-promise'
  | 'fairlock'
  | 'simplelock'
  | 'lockservice'
  | 'lockservice-solo';
export type Impl = NodeImpl | 'curator';

export function startNodeWorker(ctx: BenchContext, impl: NodeImpl, label: string = impl): LineWorker {
  return LineWorker.start(label, process.execPath, [join(ctx.buildDir, 'bench/workers/lock-worker.js'), impl]);
}

/** Starts a worker of `impl` and opens its session on `server`. */
export async function connectedWorker(ctx: BenchContext, server: ZkServer, impl: Impl, label: string = impl): Promise<LineWorker> {
  let worker: LineWorker;
  if (impl === 'curator') {
    if (!ctx.curator) throw new Error(`the Curator baseline is not available: ${ctx.curatorMissing}`);
    worker = startCuratorWorker(ctx.curator, label);
  } else {
    worker = startNodeWorker(ctx, impl, label);
  }
  const connect: Command = { name: 'connect', connect: server.connectString, sessionTimeoutMs: ctx.sessionTimeoutMs };
  try {
    await worker.ask(connect, 60_000);
  } catch (error) {
    await worker.stop();
    throw error;
  }
  return worker;
}

/** Stops workers, never throwing (used in finally blocks). */
export async function stopWorkers(workers: Iterable<LineWorker>): Promise<void> {
  await Promise.allSettled([...workers].map((w) => w.stop()));
}

/** impls rotated by `round`, so that no implementation always runs first (or right after another). */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** What every workload gets from the runner. */
import { join } from 'node:path';
import type { ZkServer } from '../../test/support/zk-server.js';
import { LineWorker } from './children.js';
import { type CuratorSetup, startCuratorWorker } from './curator.js';
import type { Command } from './protocol.js';
import type { EnsembleTarget } from './target.js';

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
  /** A 3-node ensemble on loopback, data directory and transaction log on disk, started on first use. */
  ensemble(): Promise<EnsembleTarget>;
  /**
   * Another ensemble like it, of `size` members, started now; the caller stops it
   * (`target.ensemble.stop()`), or the runner does at the end.
   */
  otherEnsemble(size: number): Promise<EnsembleTarget>;
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

/** Starts a worker of `impl` and opens its session on `server` (a server, or an ensemble's connect string). */
export async function connectedWorker(ctx: BenchContext, server: { readonly connectString: string }, impl: Impl, label: string = impl): Promise<LineWorker> {
  return (await connectedWorkerSession(ctx, server.connectString, impl, label)).worker;
}

/**
 * connectedWorker, also answering the session's id (hex). A Curator worker given several connect
 * strings separated by `|` opens a session with each (see protocol.ts): `sessionIds` has them all.
 */
export async function connectedWorkerSession(
  ctx: BenchContext,
  connectString: string,
  impl: Impl,
  label: string = impl,
): Promise<{ worker: LineWorker; sessionId: string; sessionIds: string[] }> {
  let worker: LineWorker;
  if (impl === 'curator') {
    if (!ctx.curator) throw new Error(`the Curator baseline is not available: ${ctx.curatorMissing}`);
    worker = startCuratorWorker(ctx.curator, label);
  } else {
    worker = startNodeWorker(ctx, impl, label);
  }
  const connect: Command = { name: 'connect', connect: connectString, sessionTimeoutMs: ctx.sessionTimeoutMs };
  try {
    const answer = await worker.ask<{ sessionId: string; sessionIds?: string[] }>(connect, 60_000);
    return { worker, sessionId: String(answer.sessionId), sessionIds: (answer.sessionIds ?? [answer.sessionId]).map(String) };
  } catch (error) {
    await worker.stop();
    throw error;
  }
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

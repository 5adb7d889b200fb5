/**
 * The heap workload, in a process of its own started with --expose-gc:
 * - `held`: one session takes N distinct locks and keeps them; heap per held lock is the growth of
 *   heapUsed (after full collections) between before the first acquire and when all N are held.
 *   Two passes: the first also creates every lock's parent node, the second finds them there; the
 *   heap is measured in the second.
 * - `waiting`: another session (in this process) holds N distinct locks; this session asks for all
 *   N and waits; heap per waiting acquire is the growth once the server shows all N watches set and
 *   this process has read every answer.
 *   Then the holder lets go, and the time until all N waiters hold their lock is the handoff time.
 * Config (argv[2], JSON): { connect, port, sessionTimeoutMs, locks, via, mode }. Result: last stdout line.
 */
import 'reflect-metadata';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { LockService } from '../../lib/service/lock.service.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { diffCounters, readCounters, waitForCounters } from '../support/mntr.js';

interface Config {
  connect: string;
  port: number;
  sessionTimeoutMs: number;
  locks: number;
  via: 'lockservice' | 'lockservice-solo' | 'fairlock';
  mode: 'held' | 'waiting';
}

export interface HeapResult {
  via: string;
  mode: string;
  locks: number;
  bytesPerLock: number;
  /** First pass (held): takes also creating every lock's parent; ms. */
  firstTakeMs?: number;
  takeMs?: number;
  releaseMs: number;
  /** waiting: from the holder's first release until every waiter holds its lock; ms. */
  handoffMs?: number;
  requestsPerAcquire: number;
}

type Handle = { release(): Promise<void> };

const config = JSON.parse(process.argv[2]!) as Config;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const ROOT = `/bench-heap-${config.mode}-${config.via}-${Date.now().toString(36)}`;

async function connection(): Promise<ZkConnection> {
  const c = new ZkConnection({ connectionString: config.connect, sessionTimeoutMs: config.sessionTimeoutMs });
  await c.connect();
  return c;
}

function locker(conn: ZkConnection, rootPath: string): (resource: string) => Promise<Handle> {
  if (config.via === 'fairlock') {
    const lock = new FairLock(conn, { rootPath });
    return (resource) => lock.acquire(resource);
  }
  const service = new LockService({ connection: conn, rootPath, ...(config.via === 'lockservice-solo' ? { cohort: false } : {}) });
  return (resource) => service.acquire(resource);
}

function heapUsed(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const resources = Array.from({ length: config.locks }, (_, i) => `resource-${i}`);

async function warmUp(acquire: (resource: string) => Promise<Handle>): Promise<void> {
  for (let i = 0; i < 500; i++) await (await acquire(`warm-${i % 50}`)).release();
}

async function held(): Promise<HeapResult> {
  const conn = await connection();
  const acquire = locker(conn, ROOT);
  await warmUp(acquire);
  // First pass: every lock's parent node is created on the way.
  let t0 = performance.now();
  let handles = await Promise.all(resources.map(acquire));
  const firstTakeMs = performance.now() - t0;
  await Promise.all(handles.map((h) => h.release()));
  handles = [];

  const before = heapUsed();
  const countersBefore = await readCounters(config.port);
  t0 = performance.now();
  handles = await Promise.all(resources.map(acquire));
  const takeMs = performance.now() - t0;
  const countersAfter = await readCounters(config.port);
  const after = heapUsed();
  t0 = performance.now();
  await Promise.all(handles.map((h) => h.release()));
  const releaseMs = performance.now() - t0;
  conn.close();
  return {
    via: config.via,
    mode: 'held',
    locks: config.locks,
    bytesPerLock: (after - before) / config.locks,
    firstTakeMs,
    takeMs,
    releaseMs,
    requestsPerAcquire: diffCounters(countersBefore, countersAfter).requests / config.locks,
  };
}

async function waiting(): Promise<HeapResult> {
  const holderConn = await connection();
  const holder = new FairLock(holderConn, { rootPath: ROOT });
  const holds = await Promise.all(resources.map((r) => holder.acquire(r)));
  const conn = await connection();
  const acquire = locker(conn, ROOT);
  await warmUp(acquire);

  const base = await readCounters(config.port);
  const before = heapUsed();
  const pending = resources.map(acquire);
  for (const p of pending) p.catch(() => undefined); // awaited below
  const queued = await waitForCounters(config.port, (c) => c.watches - base.watches >= config.locks, 120_000, `${config.locks} waiters queuing`);
  // The server counts a watch once it is set; this process may still be reading the answers (and
  // would count the requests in flight as waiters' heap). A request of the same session is answered
  // after all of them: once its answer is here, every waiter is settled in its wait.
  await (await conn.session()).getData('/');
  const after = heapUsed();
  const requestsPerAcquire = diffCounters(base, queued).requests / config.locks;

  let t0 = performance.now();
  await Promise.all(holds.map((h) => h.release()));
  const handles = await Promise.all(pending);
  const handoffMs = performance.now() - t0;
  t0 = performance.now();
  await Promise.all(handles.map((h) => h.release()));
  const releaseMs = performance.now() - t0;
  conn.close();
  holderConn.close();
  return {
    via: config.via,
    mode: 'waiting',
    locks: config.locks,
    bytesPerLock: (after - before) / config.locks,
    handoffMs,
    releaseMs,
    requestsPerAcquire,
  };
}

const result = config.mode === 'held' ? await held() : await waiting();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);

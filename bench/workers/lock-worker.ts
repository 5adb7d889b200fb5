/**
 * A benchmark worker in Node, speaking the line protocol of support/protocol.ts, for one
 * implementation given as its argument:
 * - `raw-pipelined`, `raw-sequential`, `raw-promise`: the raw client baselines (uncontended only);
 * - `fairlock`: this library's recipe, `FairLock` on a `ZkConnection`;
 * - `simplelock`: this library's `SimpleLock` (one ephemeral node per name) on a `ZkConnection`;
 * - `lockservice`: this library's `LockService`, as an application calls it (outside Nest's DI, on
 *   a connection it is given), with its defaults (the cohort queue on);
 * - `lockservice-solo`: the same with `cohort: false` (every caller queues in ZooKeeper);
 * A protocol `path` is the parent of the lock nodes: for the library, rootPath + '/' + resource.
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { SimpleLock } from '../../lib/recipes/simple-lock.js';
import { LockService } from '../../lib/service/lock.service.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { type Command, type ContendAnswer, parseCommand, type UncontendedAnswer } from '../support/protocol.js';
import { connectRaw, ensurePath, rawPipelinedCycle, rawPromiseCycle, rawSequentialCycle, type RawClient } from './raw-client.js';
import { drain, hold, releaseAll, writes } from './scale-commands.js';

type Impl = 'raw-pipelined' | 'raw-sequential' | 'raw-promise' | 'fairlock' | 'simplelock' | 'lockservice' | 'lockservice-solo';
const IMPLS: readonly Impl[] = ['raw-pipelined', 'raw-sequential', 'raw-promise', 'fairlock', 'simplelock', 'lockservice', 'lockservice-solo'];

/** acquire + release of one lock, however the implementation does it. */
interface Locker {
  acquire(path: string, mode?: 'read' | 'write'): Promise<{ release(): Promise<void> }>;
}

const asked = process.argv[2] ?? '';
const impl = asked as Impl;
if (!IMPLS.includes(impl)) {
  console.error(`usage: lock-worker.js <${IMPLS.join('|')}>`);
  process.exit(2);
}

let raw: RawClient | undefined;
let connection: ZkConnection | undefined;
const lockers = new Map<string, Locker>();
const rawParents = new Set<string>();

function split(path: string): { root: string; resource: string } {
  const slash = path.lastIndexOf('/');
  return { root: path.slice(0, slash), resource: path.slice(slash + 1) };
}

function locker(path: string): Locker {
  const { root } = split(path);
  let found = lockers.get(root);
  if (!found) {
    if (impl === 'fairlock') {
      const fair = new FairLock(connection!, { rootPath: root });
      found = { acquire: (p) => fair.acquire(split(p).resource) };
    } else if (impl === 'simplelock') {
      const simple = new SimpleLock(connection!, { rootPath: root });
      found = { acquire: (p) => simple.acquire(split(p).resource) };
    } else {
      const cohort = impl === 'lockservice-solo' ? false : undefined;
      const service = new LockService({ connection: connection!, rootPath: root, rootAclCheck: 'off', cohort });
      found = { acquire: (p, mode) => service.acquire(split(p).resource, mode ? { mode } : {}) };
    }
    lockers.set(root, found);
  }
  return found;
}

async function connect(command: Extract<Command, { name: 'connect' }>): Promise<object> {
  if (impl.startsWith('raw-')) {
    raw = await connectRaw(command.connect, command.sessionTimeoutMs);
    return { ok: true, sessionId: raw.sessionId };
  }
  connection = new ZkConnection({ connectionString: command.connect, sessionTimeoutMs: command.sessionTimeoutMs });
  await connection.connect();
  return { ok: true, sessionId: connection.sessionId };
}

let freshNames = 0;

async function uncontended({ path, cycles, fresh }: Extract<Command, { name: 'uncontended' }>): Promise<UncontendedAnswer> {
  if (fresh && raw) throw new Error(`${impl} has no fresh-name mode`);
  const latenciesNs = new Array<number>(cycles);
  let start: number;
  let cpu: NodeJS.CpuUsage;
  if (raw && !rawParents.has(path)) {
    await ensurePath(raw.handle, path);
    rawParents.add(path);
  }
  if (raw && impl === 'raw-promise') {
    const handle = raw.handle;
    cpu = process.cpuUsage();
    start = performance.now();
    for (let i = 0; i < cycles; i++) {
      const t0 = performance.now();
      await rawPromiseCycle(handle, path);
      latenciesNs[i] = (performance.now() - t0) * 1e6;
    }
  } else if (raw) {
    const handle = raw.handle;
    const cycle = impl === 'raw-pipelined' ? rawPipelinedCycle : rawSequentialCycle;
    cpu = process.cpuUsage();
    start = performance.now();
    await new Promise<void>((resolve, reject) => {
      let i = 0;
      let t0 = performance.now();
      const next = (error?: Error): void => {
        if (error) return reject(error);
        const t1 = performance.now();
        if (i > 0) latenciesNs[i - 1] = (t1 - t0) * 1e6;
        if (i === cycles) return resolve();
        i += 1;
        t0 = t1;
        cycle(handle, path, next);
      };
      next();
    });
  } else {
    const lock = locker(path);
    cpu = process.cpuUsage();
    start = performance.now();
    for (let i = 0; i < cycles; i++) {
      const name = fresh ? `${path}-${(freshNames += 1)}` : path;
      const t0 = performance.now();
      const held = await lock.acquire(name);
      await held.release();
      latenciesNs[i] = (performance.now() - t0) * 1e6;
    }
  }
  const elapsedNs = (performance.now() - start) * 1e6;
  const used = process.cpuUsage(cpu);
  return { cycles, elapsedNs: Math.round(elapsedNs), cpuNs: (used.user + used.system) * 1000, latenciesNs: latenciesNs.map(Math.round) };
}

async function contend({ path, callers, startAt, durationMs, readPercent, holdMs }: Extract<Command, { name: 'contend' }>): Promise<ContendAnswer> {
  if (raw) throw new Error(`${impl} has no contended mode`);
  if (readPercent !== undefined && !impl.startsWith('lockservice')) throw new Error(`${impl} has no read/write mode`);
  const lock = locker(path);
  const delay = startAt - Date.now();
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const windowStart = performance.now();
  const windowEnd = windowStart + durationMs;
  const waits: number[] = [];
  let allCycles = 0;
  const loop = async (_: unknown, caller: number): Promise<void> => {
    let seed = 1 + caller * 7919 + process.pid;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    while (performance.now() < windowEnd) {
      const mode = readPercent === undefined ? undefined : random() * 100 < readPercent ? 'read' : 'write';
      const t0 = performance.now();
      const held = await lock.acquire(path, mode);
      const t1 = performance.now();
      if (holdMs) await new Promise((r) => setTimeout(r, holdMs));
      await held.release();
      allCycles += 1;
      if (performance.now() <= windowEnd) waits.push(Math.round((t1 - t0) * 1e6));
    }
  };
  await Promise.all(Array.from({ length: callers }, loop));
  return { cycles: waits.length, allCycles, windowNs: durationMs * 1e6, waitsNs: waits };
}

/** The library's acquire for locks under `path`'s parent (hold and drain). */
function libraryAcquire(path: string): (p: string) => Promise<{ release(): Promise<void> }> {
  if (raw) throw new Error(`${impl} takes no locks`);
  const lock = locker(path);
  return (p) => lock.acquire(p);
}

async function handle(command: Command): Promise<object> {
  switch (command.name) {
    case 'connect':
      return connect(command);
    case 'uncontended':
      return uncontended(command);
    case 'contend':
      return contend(command);
    case 'hold':
      return hold(libraryAcquire(command.path), command);
    case 'releaseAll':
      return releaseAll();
    case 'drain':
      return drain(libraryAcquire(command.path), command);
    case 'writes':
      if (!raw) throw new Error(`${impl} has no writes mode (the raw client's only)`);
      return writes(raw.handle, command);
    case 'quit':
      raw?.close();
      connection?.close();
      return { ok: true };
  }
}

// One command at a time, in order; stdin closing (the benchmark is gone) ends the worker.
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer: object;
  try {
    const command = parseCommand(line);
    answer = await handle(command);
    process.stdout.write(`${JSON.stringify(answer)}\n`);
    if (command.name === 'quit') break;
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.stack ?? error.message : String(error) })}\n`);
  }
}
raw?.close();
connection?.close();
process.exit(0);

/**
 * The line protocol every benchmark worker speaks (bench/workers/lock-worker.ts in Node, and
 * bench/curator/CuratorBench.java for Curator): one command per stdin line, `name key=value ...`
 * (values without spaces), one JSON object per answer on stdout. A worker exits at `quit` or when
 * its stdin closes, so it cannot outlive the benchmark.
 *
 * - `connect connect=<host:port> sessionTimeoutMs=<ms>` -> `{ ok, sessionId }`; Curator only: several
 *   connect strings separated by `|` open a session each -> `{ ok, sessionId, sessionIds[] }`, and
 *   `contend` then gives caller thread t session t mod k, a mutex each, and adds `perSession[]`
 *   (the counted cycles of each session) to its answer.
 * - `uncontended path=<lock> cycles=<n>` -> `{ cycles, elapsedNs, cpuNs, latenciesNs[] }`: n
 *   acquire+release cycles on a free lock, one after the other; `cpuNs` is the CPU time the whole
 *   worker process used meanwhile (all its threads: the client library's, the JIT's, the GC's).
 *   Optional `fresh=1`: every cycle locks a name never used before (`<lock>-<n>`), as a lock per
 *   entity does; only the library's implementations support it.
 * - `contend path=<lock> callers=<c> startAt=<epoch ms> durationMs=<ms>` -> `{ cycles, allCycles,
 *   windowNs, waitsNs[] }`: c concurrent callers loop acquire+release on one lock during the window;
 *   a cycle counts when its release completed inside the window; `allCycles` adds the ones still in
 *   flight when it closed (their requests reach the server too); `waitsNs` are the acquire
 *   latencies of the counted cycles. Optional `mutexes=own` (Curator only): each caller thread gets
 *   its own InterProcessMutex instead of sharing one. Optional `readPercent=<p>`: the read/write lock
 *   (ours: LockService modes; Curator: InterProcessReadWriteLock), each operation a read with
 *   probability p% (a fixed-seed generator per caller); `holdMs=<ms>`: hold each lock that long.
 * - `hold path=<lock> count=<n> [gc=1]` -> `{ takeMs, heapBeforeBytes, heapAfterBytes }`: takes n
 *   distinct locks at once (`path` itself when n is 1, else `<path>-0` ... `<path>-(n-1)`) and keeps
 *   them; with gc=1 the heap in use after full collections before and after (else 0).
 * - `releaseAll` -> `{ releaseMs, releaseStartUs }`: releases what `hold` took; `releaseStartUs` is
 *   when it began, on the monotonic clock (see `drain`).
 * - `drain path=<lock> callers=<c>` -> `{ grantsUs[], releasesUs[] }`: c callers each take the lock
 *   once and release it at once; each grant's and each release's instant on the monotonic clock in
 *   µs (Node's process.hrtime and Java's System.nanoTime both read CLOCK_MONOTONIC on Linux, so
 *   instants of different processes compare).
 * - `writes path=<parent> inflight=<k> startAt=<epoch ms> durationMs=<ms>` (raw client only) ->
 *   `{ writes, allWrites, latenciesUs[] }`: k chains, each creating an EPHEMERAL_SEQUENTIAL node under
 *   `parent` and deleting it, over and over; `writes` counts the ones completed inside the window.
 * - `quit` -> `{ ok }`
 */
export interface UncontendedAnswer {
  cycles: number;
  elapsedNs: number;
  cpuNs: number;
  latenciesNs: number[];
}

export interface ContendAnswer {
  cycles: number;
  allCycles: number;
  windowNs: number;
  waitsNs: number[];
  /** Counted cycles of each session, when the worker has several (Curator only). */
  perSession?: number[];
}

export interface HoldAnswer {
  takeMs: number;
  heapBeforeBytes: number;
  heapAfterBytes: number;
}

export interface ReleaseAllAnswer {
  releaseMs: number;
  releaseStartUs: number;
}

export interface DrainAnswer {
  grantsUs: number[];
  releasesUs: number[];
}

export interface WritesAnswer {
  writes: number;
  allWrites: number;
  latenciesUs: number[];
}

export type Command =
  | { name: 'connect'; connect: string; sessionTimeoutMs: number }
  | { name: 'uncontended'; path: string; cycles: number; fresh?: 1 }
  | {
      name: 'contend';
      path: string;
      callers: number;
      startAt: number;
      durationMs: number;
      mutexes?: 'shared' | 'own';
      /** Read/write lock instead of the exclusive one: this share of the operations are reads. */
      readPercent?: number;
      /** Time each operation holds its lock, ms (default 0). */
      holdMs?: number;
    }
  | { name: 'hold'; path: string; count: number; gc?: 1 }
  | { name: 'releaseAll' }
  | { name: 'drain'; path: string; callers: number }
  | { name: 'writes'; path: string; inflight: number; startAt: number; durationMs: number }
  | { name: 'quit' };

export function formatCommand(command: Command): string {
  const { name, ...options } = command;
  const words = Object.entries(options).filter(([, value]) => value !== undefined).map(([key, value]) => {
    const text = String(value);
    if (/\s/.test(text)) throw new Error(`protocol values cannot hold spaces: ${key}=${JSON.stringify(text)}`);
    return `${key}=${text}`;
  });
  return [name, ...words].join(' ');
}

export function parseCommand(line: string): Command {
  const [name, ...words] = line.trim().split(' ');
  const options: Record<string, string> = {};
  for (const word of words) {
    const eq = word.indexOf('=');
    options[word.slice(0, eq)] = word.slice(eq + 1);
  }
  const num = (key: string): number => {
    const value = Number(options[key]);
    if (!Number.isFinite(value)) throw new Error(`${name}: ${key} must be a number, got ${options[key]}`);
    return value;
  };
  const str = (key: string): string => {
    const value = options[key];
    if (value === undefined) throw new Error(`${name}: ${key} is missing`);
    return value;
  };
  switch (name) {
    case 'connect':
      return { name, connect: str('connect'), sessionTimeoutMs: num('sessionTimeoutMs') };
    case 'uncontended':
      return { name, path: str('path'), cycles: num('cycles'), ...(options.fresh === '1' ? { fresh: 1 as const } : {}) };
    case 'contend':
      return {
        name,
        path: str('path'),
        callers: num('callers'),
        startAt: num('startAt'),
        durationMs: num('durationMs'),
        mutexes: options.mutexes === 'own' ? 'own' : 'shared',
        ...(options.readPercent === undefined ? {} : { readPercent: num('readPercent') }),
        ...(options.holdMs === undefined ? {} : { holdMs: num('holdMs') }),
      };
    case 'hold':
      return { name, path: str('path'), count: num('count'), ...(options.gc === '1' ? { gc: 1 as const } : {}) };
    case 'releaseAll':
      return { name };
    case 'drain':
      return { name, path: str('path'), callers: num('callers') };
    case 'writes':
      return { name, path: str('path'), inflight: num('inflight'), startAt: num('startAt'), durationMs: num('durationMs') };
    case 'quit':
      return { name };
    default:
      throw new Error(`unknown command ${JSON.stringify(name)}`);
  }
}

/**
 * The scale workloads' commands of the Node worker (see support/protocol.ts): `hold` and
 * `releaseAll` (many distinct locks held at once, heap per lock), `drain` (many waiters on one lock,
 * each grant's instant), and `writes` (the raw client saturating the ensemble with writes).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CREATE_FLAGS, type NativeHandle } from '../../lib/zookeeper/native-client.js';
import type { Command, DrainAnswer, HoldAnswer, ReleaseAllAnswer, WritesAnswer } from '../support/protocol.js';
import { ensurePath } from './raw-client.js';

export interface Held {
  release(): Promise<void>;
}

export type Acquire = (path: string) => Promise<Held>;

/** The monotonic clock in µs: CLOCK_MONOTONIC, the clock Java's System.nanoTime reads too. */
const nowUs = (): number => Number(process.hrtime.bigint()) / 1e3;

let gc: (() => void) | undefined;

/** heapUsed after full collections; `gc` is exposed at run time, so the worker needs no flag. */
function heapUsed(): number {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

let holding: Held[] | undefined;

export async function hold(acquire: Acquire, { path, count, gc: measure }: Extract<Command, { name: 'hold' }>): Promise<HoldAnswer> {
  if (holding) throw new Error('already holding: releaseAll first');
  const heapBeforeBytes = measure ? heapUsed() : 0;
  const t0 = performance.now();
  holding = await Promise.all(Array.from({ length: count }, (_, i) => acquire(count === 1 ? path : `${path}-${i}`)));
  const takeMs = performance.now() - t0;
  return { takeMs, heapBeforeBytes, heapAfterBytes: measure ? heapUsed() : 0 };
}

export async function releaseAll(): Promise<ReleaseAllAnswer> {
  const held = holding;
  if (!held) throw new Error('nothing held');
  holding = undefined;
  const releaseStartUs = nowUs();
  const t0 = performance.now();
  await Promise.all(held.map((h) => h.release()));
  return { releaseMs: performance.now() - t0, releaseStartUs };
}

export async function drain(acquire: Acquire, { path, callers }: Extract<Command, { name: 'drain' }>): Promise<DrainAnswer> {
  const grantsUs = new Array<number>(callers);
  const releasesUs = new Array<number>(callers);
  await Promise.all(
    Array.from({ length: callers }, async (_, i) => {
      const held = await acquire(path);
      grantsUs[i] = nowUs();
      releasesUs[i] = nowUs();
      await held.release();
    }),
  );
  return { grantsUs, releasesUs };
}

/** `inflight` chains of create (ephemeral, sequential) then delete under `path`, until the window closes. */
export async function writes(handle: NativeHandle, { path, inflight, startAt, durationMs }: Extract<Command, { name: 'writes' }>): Promise<WritesAnswer> {
  await ensurePath(handle, path);
  const delay = startAt - Date.now();
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const windowEnd = performance.now() + durationMs;
  const latenciesUs: number[] = [];
  let allWrites = 0;
  const chain = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const create = (): void => {
        if (performance.now() >= windowEnd) return resolve();
        const t0 = performance.now();
        handle.a_create(`${path}/w-`, '', CREATE_FLAGS.EPHEMERAL_SEQUENTIAL, (rc, _msg, created) => {
          if (rc !== 0) return reject(new Error(`create under ${path}: rc ${rc}`));
          done(t0);
          const t1 = performance.now();
          handle.a_delete_(created, -1, (rc2) => {
            if (rc2 !== 0) return reject(new Error(`delete ${created}: rc ${rc2}`));
            done(t1);
            create();
          });
        });
      };
      create();
    });
  const done = (t0: number): void => {
    const t1 = performance.now();
    allWrites += 1;
    if (t1 <= windowEnd) latenciesUs.push(Math.round((t1 - t0) * 1000));
  };
  await Promise.all(Array.from({ length: inflight }, chain));
  return { writes: latenciesUs.length, allWrites, latenciesUs };
}

/**
 * The native addon keeps nothing per request or per watch: over 100,000 requests of every kind the
 * library sends (exists, get, create and delete, a multi, a watch set and fired both ways — the
 * default watcher and an aw_* watch function — and a watch removed), the JavaScript heap and the
 * process's resident memory are no larger, after garbage collection, than after a warm-up.
 *
 * A leak of the binding's record per request (about 150 bytes of C++ and a reference to the
 * callback, which keeps its closure alive) is 15 MB or more over the run, several times either
 * bound below; checked by leaking on purpose (not freeing the record in complete()).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATE_FLAGS, loadNativeModule, MULTI_OPS, type NativeClient, type NativeHandle } from '../../lib/zookeeper/native-client.js';
import { startZkServer, type ZkServer } from '../support/zk-server.js';

// A gc() for this worker: exposed to new contexts once the flag is set.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const WARM_UP = 30_000;
const RUN = 100_000;
const IN_FLIGHT = 64;
const ZNONODE = -101;
const ZNOWATCHER = -121;

/** The addon's aw_* methods, which NativeHandle does not type (the library sets watches with a_get). */
type WatchingHandle = NativeHandle & {
  aw_get(path: string, watcher: () => void, cb: (rc: number) => void): number;
  aw_exists(path: string, watcher: () => void, cb: (rc: number) => void): number;
};

function settle(): void {
  for (let i = 0; i < 4; i++) gc();
}

/**
 * heap: the JavaScript objects alive (a callback the binding still referenced would stay here, with
 * its closure). native: the process's resident memory less the memory V8 reserved for its heap,
 * which V8 grows on its own schedule (by several MiB during a run like this one, with no object
 * more alive): what is left is malloc's, where the binding's records and references live.
 */
function memory(): { heap: number; rss: number; native: number } {
  settle();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss, native: usage.rss - usage.heapTotal };
}

describe('native addon memory', () => {
  let zk: ZkServer;
  let client: NativeClient;
  beforeAll(async () => {
    // Writes without fsync: the run is about the client, not the disk.
    zk = await startZkServer({ extraConfig: ['forceSync=no'] });
    const Native = loadNativeModule();
    const config = { connect: zk.connectString, timeout: 10_000, debug_level: 0, host_order_deterministic: true };
    client = new Native(config);
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      const started = client.native.init(config);
      if (started instanceof Error) reject(started);
    });
  });
  afterAll(async () => {
    client?.close();
    await zk?.stop();
  });

  /** Sends `count` requests, IN_FLIGHT at a time, cycling through the mix; fails on any unexpected code. */
  function run(count: number, root: string): Promise<{ sent: number; events: number; watchers: number }> {
    const handle = client.native as WatchingHandle;
    let sent = 0;
    let events = 0;
    let watchers = 0;
    let step = 0;
    let active = 0;
    let failed: Error | undefined;
    const onEvent = (): void => {
      events++;
    };
    client.on('changed', onEvent);
    return new Promise((resolve, reject) => {
      const check = (what: string, rc: number, ...ok: number[]): boolean => {
        if (rc === 0 || ok.includes(rc)) return true;
        failed ??= new Error(`${what}: rc ${rc}`);
        next();
        return false;
      };
      // Removes the data watches on `path`; ZNOWATCHER (at once or from the server) when a change in
      // flight fired them first.
      const removeWatches = (path: string, then: () => void): void => {
        const rc = handle.a_remove_data_watches(path, (rc2) => check('remove watches', rc2, ZNOWATCHER) && then());
        sent++;
        if (rc === ZNOWATCHER) then();
        else if (rc !== 0) failed ??= new Error(`remove watches not sent: rc ${rc}`);
      };
      const done = (): void => {
        active--;
        next();
      };
      const send = (what: string, rc: number): void => {
        sent++;
        if (rc !== 0) {
          failed ??= new Error(`${what} not sent: rc ${rc}`);
          queueMicrotask(next);
        }
      };
      const unit = (): void => {
        const i = step++;
        const slot = i % IN_FLIGHT;
        const node = `${root}/n${slot}`;
        active++;
        switch (i % 10) {
          case 0:
          case 1:
          case 2:
            send('exists', handle.a_exists(node, false, (rc) => check('exists', rc) && done()));
            break;
          case 3:
          case 4:
            send('get', handle.a_get(node, false, (rc, _m, _s, data) => check('get', rc) && data !== null && done()));
            break;
          case 5:
            send(
              'create',
              handle.a_create(`${node}/c${i}`, Buffer.from('x'), CREATE_FLAGS.PERSISTENT, (rc) => {
                if (!check('create', rc)) return;
                send('delete', handle.a_delete_(`${node}/c${i}`, -1, (rc2) => check('delete', rc2) && done()));
              }),
            );
            break;
          case 6:
            send(
              'multi',
              handle.a_multi(
                [
                  { type: MULTI_OPS.create, path: `${node}/m${i}`, data: 'y', flags: CREATE_FLAGS.PERSISTENT },
                  { type: MULTI_OPS.setData, path: `${node}/m${i}`, data: Buffer.from('z'), version: -1 },
                  { type: MULTI_OPS.delete, path: `${node}/m${i}`, version: -1 },
                ],
                (rc, _m, results) => check('multi', rc) && results.length === 3 && done(),
              ),
            );
            break;
          case 7:
            // A watch set (the default watcher, as the library sets them) and fired by a change.
            send(
              'get+watch',
              handle.a_get(node, true, (rc) => {
                if (!check('get+watch', rc)) return;
                send('set', handle.a_set(node, Buffer.from('v'), -1, (rc2) => check('set', rc2) && done()));
              }),
            );
            break;
          case 8:
            // A watch function set (aw_get) and fired by a change.
            send(
              'aw_get',
              handle.aw_get(
                `${node}/w`,
                () => {
                  watchers++;
                },
                (rc) => {
                  if (!check('aw_get', rc)) return;
                  send('set', handle.a_set(`${node}/w`, Buffer.from('v'), -1, (rc2) => check('set', rc2) && done()));
                },
              ),
            );
            break;
          case 9:
            // Watches set and removed: an aw_exists watch function on a missing node, and the
            // default watcher's, both removed (ZNOWATCHER when a change in flight fired them first).
            send(
              'aw_exists',
              handle.aw_exists(
                `${node}/absent`,
                () => undefined,
                (rc) => {
                  if (!check('aw_exists', rc, ZNONODE)) return;
                  removeWatches(`${node}/absent`, () =>
                    send(
                      'get+watch',
                      handle.a_get(node, true, (rc3) => check('get+watch', rc3) && removeWatches(node, done)),
                    ),
                  );
                },
              ),
            );
            break;
        }
      };
      const next = (): void => {
        if (failed) {
          client.off('changed', onEvent);
          reject(failed);
          return;
        }
        while (active < IN_FLIGHT && sent < count) unit();
        if (active === 0 && sent >= count) {
          client.off('changed', onEvent);
          resolve({ sent, events, watchers });
        }
      };
      next();
    });
  }

  async function prepare(root: string): Promise<void> {
    const handle = client.native;
    const create = (path: string): Promise<void> =>
      new Promise((resolve, reject) => {
        handle.a_create(path, Buffer.from('v'), CREATE_FLAGS.PERSISTENT, (rc) => (rc === 0 || rc === -110 ? resolve() : reject(new Error(`create ${path}: rc ${rc}`))));
      });
    await create(root);
    for (let slot = 0; slot < IN_FLIGHT; slot++) {
      await create(`${root}/n${slot}`);
      await create(`${root}/n${slot}/w`);
    }
  }

  it(`holds the heap and resident memory flat over ${RUN.toLocaleString('en')} requests`, async () => {
    const root = `/native-memory-${process.pid}`;
    await prepare(root);
    const warm = await run(WARM_UP, root);
    expect(warm.sent).toBeGreaterThanOrEqual(WARM_UP);
    // Resident memory still settles after the warm-up (the allocator's arenas, V8's heap pages): a
    // first full run reaches the steady state, and the second is measured. A leak grows in both.
    await run(RUN, root);
    const before = memory();
    const measured = await run(RUN, root);
    const after = memory();
    expect(measured.sent).toBeGreaterThanOrEqual(RUN);
    // Watches fired both ways (some default-watcher events are for nodes of the removal step).
    expect(measured.events).toBeGreaterThan(RUN / 20);
    expect(measured.watchers).toBeGreaterThan(RUN / 20);
    const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
    console.log(
      `native memory over ${measured.sent} requests after ${warm.sent} of warm-up and one unmeasured run: heap ${mib(before.heap)} -> ${mib(after.heap)} MiB, ` +
        `rss ${mib(before.rss)} -> ${mib(after.rss)} MiB, rss less V8's heap ${mib(before.native)} -> ${mib(after.native)} MiB`,
    );
    expect(after.heap - before.heap).toBeLessThan(2 * 2 ** 20);
    expect(after.native - before.native).toBeLessThan(4 * 2 ** 20);
  }, 180_000); // a bound for a broken run, not a measurement: its 230,000 requests took over 60 s beside two busy loops on 2 cores
});

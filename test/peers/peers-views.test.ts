/**
 * The views (inspectAll, LockService.inspect, the CLI's inspect) on locks held and waited for by the
 * real Apache Curator (5.4) and kazoo (2.8): holders and waiters as those clients decide them (their
 * own ACQUIRED and QUEUED replies), with what each node names, and the same holders requestRelease
 * asks.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LockService } from '../../lib/index.js';
import type { LockViewData } from '../../lib/live-view/view-model.js';
import { inspectAll, type LockOverview } from '../../lib/recipes/inspect-all.js';
import type { LockInspection } from '../../lib/recipes/lock-inspection.js';
import { RecipeRuntime } from '../../lib/recipes/recipe-runtime.js';
import { requestRelease } from '../../lib/recipes/release-request.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { startLockApp } from '../support/lock-app.js';
import { CLI, runCli } from '../support/cli-run.js';
import { type PeerWorker, usePeer } from '../support/peers.js';
import { childrenOf, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually } from '../support/zk-fixtures.js';

const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

describe('the views of locks held by the real Curator and kazoo', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const curator = usePeer('curator');
  const kazoo = usePeer('kazoo');

  /** Who holds and who waits on each path, as the peers themselves said. */
  interface Expected {
    holders: { worker: PeerWorker; node: string }[];
    waiters: { worker: PeerWorker; node: string }[];
  }

  /**
   * Under a fresh root: a Curator mutex, a Curator read/write lock, a kazoo lock and a kazoo
   * semaphore (1 lease), each with a holder and a waiter queued after it; and `mixed`, which holds a
   * Curator node and a kazoo node (no client would make it; it is what a misconfigured pair leaves).
   */
  async function peersOnPaths(): Promise<{ root: string; connection: ZkConnection; expected: Record<string, Expected> }> {
    const root = uniqueRoot('views');
    const connection = await connect();
    const session = await connection.session();
    await session.create(root, '', 'PERSISTENT');
    // kazoo creates its own paths (and stores the semaphore's max_leases in the one it creates).
    for (const name of ['mutex', 'rw', 'mixed']) await session.create(`${root}/${name}`, '', 'PERSISTENT');
    const [j1, j2, j3, j4, j5, j6] = await Promise.all(['j1', 'j2', 'j3', 'j4', 'j5', 'j6'].map((name) => curator.peer.worker(name, zk.connectString)));
    const [p1, p2, p3, p4] = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((name) => kazoo.peer.worker(name, zk.connectString)));
    const holdAndQueue = async (path: string, holder: [PeerWorker, string, ...string[]], waiter: [PeerWorker, string, ...string[]]): Promise<Expected> => {
      const [hw, hkind, ...hoptions] = holder;
      const [ww, wkind, ...woptions] = waiter;
      const held = await hw.acquire(hkind, path, ...hoptions);
      const queued = await ww.startAcquire(wkind, path, ...woptions).queued;
      return { holders: [{ worker: hw, node: held }], waiters: [{ worker: ww, node: queued }] };
    };
    const expected: Record<string, Expected> = {
      mutex: await holdAndQueue(`${root}/mutex`, [j1!, 'mutex'], [j2!, 'mutex']),
      rw: await holdAndQueue(`${root}/rw`, [j3!, 'read'], [j4!, 'write']),
      kazoo: await holdAndQueue(`${root}/kazoo`, [p1!, 'lock', 'id=alice'], [p2!, 'lock', 'id=bob']),
      sem: await holdAndQueue(`${root}/sem`, [p3!, 'semaphore', 'leases=1', 'id=carol'], [p4!, 'semaphore', 'leases=1', 'id=dave']),
    };
    // Curator's semaphore: j6 takes the guard, adds its lease, finds the pool full and waits with it.
    const curatorPool = await holdAndQueue(`${root}/csem`, [j5!, 'semaphore', 'leases=1'], [j6!, 'semaphore', 'leases=1']);
    await eventually(async () => (await childrenOf(connection, `${root}/csem/leases`)).length === 2, { what: "j6's lease" });
    expected.csem = { holders: curatorPool.holders, waiters: curatorPool.waiters };
    await session.create(`${root}/mixed/_c_${randomUUID()}-lock-`, 'x', 'EPHEMERAL_SEQUENTIAL');
    await session.create(`${root}/mixed/${randomUUID().replaceAll('-', '')}__lock__`, 'y', 'EPHEMERAL_SEQUENTIAL');
    return { root, connection, expected };
  }

  /** What ZooKeeper stores in a node, as text: what the view must show as its participant. */
  async function dataOf(connection: ZkConnection, path: string): Promise<string> {
    return (await (await connection.session()).getData(path)).data.toString();
  }

  /** Holders and waiters of `lock` as (node path, session, participant), to compare with the peers'. */
  function rolesOf(lock: LockInspection): { holders: string[][]; waiters: string[][] } {
    const row = (node: LockInspection['holders'][number], parent: string) => [`${parent}/${node.node}`, `0x${node.sessionId}`, String(node.data)];
    // A pool's leases and its guard lock: kazoo's are the path and its sibling `<path>-__lock__`, Curator's `leases` and `locks` under it.
    const kazooPool = lock.recipe === 'pool' && lock.layout === 'kazoo';
    const [leases, guard] = lock.recipe !== 'pool' ? [lock.path, lock.path] : kazooPool ? [lock.path, `${lock.path}-__lock__`] : [`${lock.path}/leases`, `${lock.path}/locks`];
    return { holders: lock.holders.map((n) => row(n, leases)), waiters: lock.waiters.map((n) => row(n, guard)) };
  }

  async function expectedRoles(connection: ZkConnection, expected: Expected): Promise<{ holders: string[][]; waiters: string[][] }> {
    const row = async ({ worker, node }: { worker: PeerWorker; node: string }) => [node, worker.sessionId, await dataOf(connection, node)];
    return { holders: await Promise.all(expected.holders.map(row)), waiters: await Promise.all(expected.waiters.map(row)) };
  }

  it("inspectAll with a scan root: each child's holders and waiters as Curator and kazoo decide them, with what each node names; a path of two layouts is reported, not read", async () => {
    const { root, connection, expected } = await peersOnPaths();
    const overview: LockOverview = await inspectAll(new RecipeRuntime(connection, { rootPath: uniqueRoot('ours') }), { scan: [{ root }] });

    expect(overview.locks.map((lock) => [lock.path, lock.layout, lock.recipe])).toEqual([
      [`${root}/csem`, 'curator', 'pool'],
      [`${root}/kazoo`, 'kazoo', 'queue'],
      [`${root}/mutex`, 'curator', 'queue'],
      [`${root}/rw`, 'curator', 'queue'],
      [`${root}/sem`, 'kazoo', 'pool'], // its guard, `sem-__lock__`, is not listed apart: its nodes are the waiters
    ]);
    const byName = Object.fromEntries(overview.locks.map((lock) => [nameOf(lock.path), lock]));
    // Curator's semaphore included: j6's lease, added while it holds the guard, waits with it (the
    // control: ZooKeeper holds two leases, and the view shows one holder).
    for (const [name, roles] of Object.entries(expected)) {
      expect(rolesOf(byName[name]!), name).toEqual(await expectedRoles(connection, roles));
    }
    expect(await childrenOf(connection, `${root}/csem/leases`)).toHaveLength(2);
    // Curator writes its client's address by default; kazoo the identifier it was given.
    expect(byName.mutex!.holders[0]!.data).not.toBe('');
    expect(byName.kazoo!.holders.map((n) => n.data)).toEqual(['alice']);
    expect(byName.sem!.holders.map((n) => [n.data, n.mode, n.permits])).toEqual([['carol', 'semaphore', 1]]);
    expect(byName.rw!.holders.map((n) => n.mode)).toEqual(['read']);
    expect(byName.rw!.waiters.map((n) => n.mode)).toEqual(['write']);
    expect(byName.kazoo!.holders.map((n) => n.mode)).toEqual(['exclusive']);
    expect(overview.unreadable).toEqual([
      { path: `${root}/mixed`, reason: expect.stringMatching(/nodes of Curator's InterProcessMutex .* and kazoo's Lock, WriteLock or ReadLock .*do not exclude each other/) as unknown },
    ]);

    // Control: requestRelease, by the same rules, asks exactly the holders the view shows.
    const runtime = new RecipeRuntime(connection, { rootPath: uniqueRoot('ours') });
    for (const name of ['mutex', 'rw', 'kazoo']) {
      const result = await requestRelease(runtime, `${root}/${name}`, byName[name]!.layout);
      expect(result.requested, name).toEqual(byName[name]!.holders.map((node) => `${root}/${name}/${node.node}`));
    }
  });

  it('LockService.inspect({ zkPath, layout }) reads one Curator lock; the wrong layout is a typed error naming the right one', async () => {
    const { root, connection, expected } = await peersOnPaths();
    const started = await startLockApp(zk, { ...STEADY_SESSION, rootPath: uniqueRoot('svc') });
    try {
      const locks: LockService = started.locks;
      const mutex = await locks.inspect('billing', { zkPath: `${root}/mutex`, layout: 'curator' });
      expect(mutex).toMatchObject({ resource: 'billing', layout: 'curator', recipe: 'queue' });
      expect(rolesOf(mutex)).toEqual(await expectedRoles(connection, expected.mutex!));
      await expect(locks.inspect('billing', { zkPath: `${root}/mutex`, layout: 'kazoo' })).rejects.toThrow(
        /"layout": 'kazoo' does not match the lock at .*mutex: its path holds Curator's InterProcessMutex \(layout: 'curator', mode 'exclusive'\) nodes/,
      );
      // Without a layout, the one its nodes show; without a zkPath, our rootPath (nothing there).
      expect(await locks.inspect('billing', { zkPath: `${root}/kazoo` })).toMatchObject({ layout: 'kazoo', recipe: 'queue' });
      expect(await locks.inspect('billing')).toMatchObject({ layout: 'nestjs-zk-lock', recipe: 'none' });
    } finally {
      await started.application.close();
    }
  });

  it('nestjs-zk-lock inspect --scan prints them as JSON and as a table; --path with the wrong --layout says what to use', async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before this test (npm test does).`);
    const { root, connection, expected } = await peersOnPaths();
    const ourRoot = uniqueRoot('cli');
    const json = await runCli(['inspect', '--connect', zk.connectString, '--root', ourRoot, '--scan', root, '--json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as LockViewData;
    expect(view.locks.map((lock) => [nameOf(lock.path), lock.layout, lock.kind])).toEqual([
      ['csem', 'curator', 'semaphore'],
      ['kazoo', 'kazoo', 'exclusive'],
      ['mutex', 'curator', 'exclusive'],
      ['rw', 'curator', 'read/write'],
      ['sem', 'kazoo', 'semaphore'],
    ]);
    const mutex = view.locks[2]!;
    const [holder, waiter] = await Promise.all([expected.mutex!.holders[0]!, expected.mutex!.waiters[0]!].map(async ({ worker, node }) => ({
      node: nameOf(node),
      sessionId: worker.sessionId.slice(2),
      participant: await dataOf(connection, node),
    })));
    expect(mutex.holders).toMatchObject([holder]);
    expect(mutex.waiters).toMatchObject([waiter]);
    expect(view.unreadable?.map((item) => item.path)).toEqual([`${root}/mixed`]);

    const table = await runCli(['inspect', '--connect', zk.connectString, '--root', ourRoot, '--scan', root, '--layout', 'kazoo']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^2 locks \\(0 under ${ourRoot}, 2 at other paths\\), read at `));
    // Up to OWNER, which shows the participant; a waiter's row leaves RESOURCE and KIND empty.
    const rows = lines.slice(3, -2).map((line) => line.trim().split(/\s{2,}/).slice(0, line.startsWith(' ') ? 3 : 5));
    expect(rows).toEqual([
      [`${root}/kazoo`, 'kazoo exclusive', 'holder', 'exclusive', 'alice'],
      ['waiter #1', 'exclusive', 'bob'],
      [`${root}/sem`, 'kazoo semaphore (1 permits)', 'holder', 'semaphore', 'carol'],
      // kazoo 2.8's Semaphore gives its guard lock the bytes of its identifier: the node says b'dave'.
      ['waiter #1', 'semaphore', "b'dave'"],
    ]);
    // The path that mixes layouts holds kazoo nodes too: it is reported under the table.
    expect(lines.at(-1)).toMatch(new RegExp(`^Not read: ${root}/mixed: it holds nodes of Curator's InterProcessMutex`));

    const wrong = await runCli(['inspect', '--connect', zk.connectString, '--root', ourRoot, '--path', `${root}/mutex`, '--layout', 'kazoo']);
    expect(wrong.code).toBe(0);
    expect(wrong.stdout).toMatch(new RegExp(`Not read: ${root}/mutex: .*'kazoo' does not match .*\\(layout: 'curator', mode 'exclusive'\\)`));
    const bad = await runCli(['inspect', '--connect', zk.connectString, '--path', 'relative/x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Bad --path: Invalid lock path "relative\/x": zkPath must be an absolute ZooKeeper path/);
  });
});

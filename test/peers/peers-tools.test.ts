/**
 * The live view page and the CLI's `inspect` and `revoke` on what the real Apache Curator (5.4) and
 * kazoo (2.8) make: locks, waiters and elections as those clients decide them (their own ACQUIRED,
 * QUEUED and LEADER replies), and a revocation the real Curator acts on. The tests beside the tools
 * (test/e2e/live-view*.test.ts) use nodes our library makes in those clients' layouts.
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZkLockModule } from '../../lib/index.js';
import { ZkLockViewModule } from '../../lib/live-view/index.js';
import type { LockViewData } from '../../lib/live-view/view-model.js';
import { CLI, runCli } from '../support/cli-run.js';
import { launchChromium, shownLocks } from '../support/live-view-page.js';
import { type PeerWorker, usePeer } from '../support/peers.js';
import { STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
/** A session id as a number, however it is written (`0x…` by the peers, hex digits in the views). */
const session = (id: string): bigint => BigInt(id.startsWith('0x') ? id : `0x${id}`);

describe('the live view and the CLI on locks and elections of the real Curator and kazoo', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const curator = usePeer('curator');
  const kazoo = usePeer('kazoo');
  const apps: INestApplication[] = [];
  let browser: Browser | undefined;

  beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before these tests (npm test does).`);
  });
  afterAll(async () => {
    await browser?.close();
    for (const application of apps) await application.close();
  });

  /**
   * A fresh root with a Curator mutex, a kazoo lock and a Curator LeaderLatch, each with one in line
   * behind. Workers are named after the test (`tag`): a reply still awaited by an earlier test's
   * worker must not take a later one's.
   */
  async function peersUnder(tag: string) {
    const root = uniqueRoot(tag);
    const ours = await (await connect()).session();
    await ours.create(root, '', 'PERSISTENT');
    const worker = (peer: typeof curator, id: string): Promise<PeerWorker> => peer.peer.worker(`${tag}-${id}`, zk.connectString);
    const [j1, j2, j3, j4, p1, p2] = await Promise.all([worker(curator, 'j1'), worker(curator, 'j2'), worker(curator, 'j3'), worker(curator, 'j4'), worker(kazoo, 'p1'), worker(kazoo, 'p2')]);
    const mutex = { holder: j1!, node: await j1!.acquire('mutex', `${root}/mutex`), waiter: j2!, queued: await j2!.startAcquire('mutex', `${root}/mutex`).queued };
    const lock = { holder: p1!, node: await p1!.acquire('lock', `${root}/kazoo`, 'id=alice'), waiter: p2!, queued: await p2!.startAcquire('lock', `${root}/kazoo`, 'id=bob').queued };
    const latch = { holder: j3!, node: await j3!.lead(`${root}/latch`, { id: 'java-1' }), waiter: j4!, queued: await j4!.startLatch(`${root}/latch`, { id: 'java-2' }).queued };
    return { root, mutex, lock, latch };
  }

  it('the live view page shows them as the peers decided: holder or leader first, then the one in line, with their nodes, sessions and ids', async () => {
    const { root, mutex, lock, latch } = await peersUnder('peer-view');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zk.connectString, rootPath: uniqueRoot('peer-view-ours'), ...STEADY_SESSION }),
        ZkLockViewModule.register({ refreshMs: 250, scan: [{ root }] }),
      ],
    }).compile();
    const application = moduleRef.createNestApplication({ logger: false });
    await application.listen(0, '127.0.0.1');
    apps.push(application);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${await application.getUrl()}/zk-locks`);
    for (const path of [`${root}/mutex`, `${root}/kazoo`, `${root}/latch`]) await page.waitForSelector(`section.lock[data-resource="${path}"] tbody tr:nth-child(2)`);

    const shown = Object.fromEntries((await shownLocks(page)).map((shownLock) => [shownLock.resource, shownLock]));
    expect(Object.keys(shown)).toEqual([`${root}/kazoo`, `${root}/latch`, `${root}/mutex`]);
    expect([shown[`${root}/mutex`]!.kind, shown[`${root}/kazoo`]!.kind, shown[`${root}/latch`]!.kind]).toEqual(['curator exclusive', 'kazoo exclusive', 'curator election']);
    const rows = (path: string) => shown[path]!.rows.map((row) => [row.role, row.node, session(row.session)]);
    const expected = (first: string, next: string, peers: typeof mutex) => [
      [first, nameOf(peers.node), session(peers.holder.sessionId)],
      [next, nameOf(peers.queued), session(peers.waiter.sessionId)],
    ];
    expect(rows(`${root}/mutex`)).toEqual(expected('holder', 'waiter #1', mutex));
    expect(rows(`${root}/kazoo`)).toEqual(expected('holder', 'waiter #1', lock));
    expect(rows(`${root}/latch`)).toEqual(expected('leader', 'follower #1', latch));
    // kazoo's identifiers and the latch's ids are the owners; Curator's mutex writes its client's address.
    expect(shown[`${root}/kazoo`]!.rows.map((row) => row.owner)).toEqual(['alice', 'bob']);
    expect(shown[`${root}/latch`]!.rows.map((row) => row.owner)).toEqual(['java-1', 'java-2']);
    expect(shown[`${root}/mutex`]!.rows[0]!.owner).not.toBe('');

    // The next leader appears once the real leader leaves.
    await latch.holder.unlatch();
    await expect
      .poll(async () => (await shownLocks(page)).find((shownLock) => shownLock.resource === `${root}/latch`)?.rows.map((row) => [row.role, row.owner]), { timeout: 30_000 })
      .toEqual([['leader', 'java-2']]);
    await page.close();
  });

  it("nestjs-zk-lock inspect shows the real Curator's LeaderLatch as a Curator election, and kazoo's Election as the kazoo lock it is made of", async () => {
    const { root, latch } = await peersUnder('peer-inspect');
    const [py1, py2] = await Promise.all([kazoo.peer.worker('inspect-py1', zk.connectString), kazoo.peer.worker('inspect-py2', zk.connectString)]);
    const election = { node: await py1.lead(`${root}/election`, { id: 'py-1' }), queued: await py2.startLatch(`${root}/election`, { id: 'py-2' }).queued };

    const json = await runCli(['inspect', '--connect', zk.connectString, '--root', uniqueRoot('peer-inspect-ours'), '--scan', root, '--json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as LockViewData;
    const byName = Object.fromEntries(view.locks.map((entry) => [nameOf(entry.path), entry]));
    expect(Object.entries(byName).map(([name, entry]) => [name, entry.layout, entry.kind])).toEqual([
      ['election', 'kazoo', 'exclusive'], // kazoo's Election is a Lock whose holder leads
      ['kazoo', 'kazoo', 'exclusive'],
      ['latch', 'curator', 'election'],
      ['mutex', 'curator', 'exclusive'],
    ]);
    const inLine = (name: string) => [...byName[name]!.holders, ...byName[name]!.waiters].map((node) => [node.node, node.participant]);
    expect(inLine('latch')).toEqual([
      [nameOf(latch.node), 'java-1'],
      [nameOf(latch.queued), 'java-2'],
    ]);
    expect(inLine('election')).toEqual([
      [nameOf(election.node), 'py-1'],
      [nameOf(election.queued), 'py-2'],
    ]);

    const table = await runCli(['inspect', '--connect', zk.connectString, '--root', uniqueRoot('peer-inspect-ours'), '--path', `${root}/latch`, '--layout', 'curator']);
    expect(table.code).toBe(0);
    const rows = table.stdout
      .trimEnd()
      .split('\n')
      .slice(3)
      .map((line) => line.trim().split(/\s{2,}/).slice(0, line.startsWith(' ') ? 3 : 5));
    expect(rows).toEqual([
      [`${root}/latch`, 'curator election', 'leader', 'election', 'java-1'],
      ['follower #1', 'election', 'java-2'],
    ]);
  });

  it("nestjs-zk-lock revoke: the real Curator's revocable holder releases on the request and its waiter gets the lock; a kazoo holder (kazoo has no revocation) is forced after --force-after and kazoo's waiter gets it", async () => {
    const root = uniqueRoot('peer-revoke');
    const [j1, j2, p1, p2] = await Promise.all([
      curator.peer.worker('revoke-j1', zk.connectString),
      curator.peer.worker('revoke-j2', zk.connectString),
      kazoo.peer.worker('revoke-p1', zk.connectString),
      kazoo.peer.worker('revoke-p2', zk.connectString),
    ]);
    const held = await j1.acquire('mutex', `${root}/mutex`, 'revocable=release');
    const next = j2.startAcquire('mutex', `${root}/mutex`);
    await next.queued;
    const heard = j1.reply('REVOKE-REQUESTED');
    const asked = await runCli(['revoke', '--connect', zk.connectString, '--path', `${root}/mutex`, '--layout', 'curator', '--json']);
    expect(asked.stderr).toBe('');
    expect(asked.code).toBe(0);
    expect((JSON.parse(asked.stdout) as { requested: string[] }).requested).toEqual([held]);
    await heard; // Curator's RevocationListener ran
    expect(await next.outcome).toEqual({ acquired: true, node: expect.stringContaining(`${root}/mutex/`) as unknown });
    expect(next.decided).toMatchObject({ acquired: true });

    const kazooHeld = await p1.acquire('lock', `${root}/kazoo`, 'id=alice');
    const kazooNext = p2.startAcquire('lock', `${root}/kazoo`, 'id=bob');
    await kazooNext.queued;
    const forced = await runCli(['revoke', '--connect', zk.connectString, '--path', `${root}/kazoo`, '--layout', 'kazoo', '--force-after', '100', '--json']);
    expect(forced.code).toBe(0);
    expect((JSON.parse(forced.stdout) as { forced: string[] }).forced).toEqual([kazooHeld]);
    expect((await kazooNext.outcome).acquired).toBe(true);
  });
});

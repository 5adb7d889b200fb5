import 'reflect-metadata';
import { type CanActivate, type INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LockHandle, type LockService, ZkLockModule } from '../../lib/index.js';
import { ZkLockViewModule, type ZkLockViewOptions } from '../../lib/live-view/index.js';
import type { LockViewData } from '../../lib/live-view/view-model.js';
import { curatorMutexDriver } from '../../lib/queue/foreign-drivers.js';
import { Candidacy } from '../../lib/recipes/candidacy.js';
import { QueueLock } from '../../lib/recipes/queue-lock.js';
import { encodeResource } from '../../lib/zookeeper/paths.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { launchChromium, shownLocks } from '../support/live-view-page.js';
import { startLockApp } from '../support/lock-app.js';
import { childrenOf, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

/** Set to a file path (docs/live-view.png) to save a screenshot of the page with its locks. */
const SCREENSHOT = process.env.LIVE_VIEW_SCREENSHOT;

describe('the live view page in headless Chromium, against a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const rootPath = uniqueRoot('liveview');
  const apps: INestApplication[] = [];
  let browser: Browser;
  let viewUrl: string;
  const lockers: LockService[] = [];

  async function viewerApp(options: ZkLockViewOptions | undefined): Promise<string> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zk.connectString, rootPath, ...STEADY_SESSION }),
        ...(options ? [ZkLockViewModule.register(options)] : []),
      ],
    }).compile();
    const application = moduleRef.createNestApplication({ logger: false });
    await application.listen(0, '127.0.0.1');
    apps.push(application);
    return application.getUrl();
  }

  beforeAll(async () => {
    browser = await launchChromium();
    viewUrl = `${await viewerApp({ refreshMs: 250 })}/zk-locks`;
    // Three more applications: three sessions that take the locks the page shows.
    for (let i = 0; i < 3; i++) {
      const { application, locks } = await startLockApp(zk, { rootPath, ...STEADY_SESSION });
      apps.push(application);
      lockers.push(locks);
    }
  });

  afterAll(async () => {
    await browser?.close();
    for (const application of apps.reverse()) await application.close();
  });

  /** The queue of a resource as ZooKeeper has it: node names in sequence order, with their owners. */
  async function queueInZooKeeper(connection: ZkConnection, resource: string): Promise<{ node: string; session: string; owner: string }[]> {
    const path = `${rootPath}/${encodeResource(resource)}`;
    const names = (await childrenOf(connection, path)).sort((a, b) => a.slice(-10).localeCompare(b.slice(-10)));
    const session = await connection.session();
    return Promise.all(
      names.map(async (node) => {
        const { data } = await session.getData(`${path}/${node}`);
        return { node, session: node.split('-')[1]!, owner: (JSON.parse(data.toString()) as { owner: string }).owner };
      }),
    );
  }

  /** Checks every section against ZooKeeper: same nodes, same order, same sessions and owners; the first `holders` hold. */
  async function expectPageMatchesZooKeeper(page: Page, connection: ZkConnection, holders: Record<string, number>): Promise<void> {
    const shown = await shownLocks(page);
    expect(shown.map((lock) => lock.resource)).toEqual(Object.keys(holders).sort());
    for (const lock of shown) {
      const queue = await queueInZooKeeper(connection, lock.resource);
      expect(lock.rows.map((row) => [row.node, row.session, row.owner])).toEqual(queue.map((n) => [n.node, n.session, n.owner]));
      const roles = lock.rows.map((row) => row.role);
      const count = holders[lock.resource]!;
      expect(roles).toEqual([...Array<string>(count).fill('holder'), ...roles.slice(count).map((_, i) => `waiter #${i + 1}`)]);
      for (const row of lock.rows) {
        expect(row.host).not.toBe('');
        expect(row.pid).toBe(String(process.pid));
        expect(row.age).toMatch(/^\d+(\.\d)? (ms|s)$|^\d+ min \d\d s$/);
      }
    }
  }

  it('shows every lock with its holder and its waiters in queue order, as ZooKeeper has them, and follows a release without reloading', async () => {
    const [a, b, c] = lockers as [LockService, LockService, LockService];
    const zkView = await connect();
    const ordersPath = `${rootPath}/${encodeResource('orders/42')}`;
    const handles: LockHandle[] = [await a.acquire('orders/42', { owner: 'job-a' })];
    const waits: Promise<LockHandle>[] = [b.acquire('orders/42', { owner: 'job-b' })];
    await queueLength(zkView, ordersPath, 2);
    waits.push(c.acquire('orders/42', { owner: 'job-c' }));
    await queueLength(zkView, ordersPath, 3);
    handles.push(await a.acquire('doc', { mode: 'write', owner: 'PUT /doc' }));
    waits.push(b.acquire('doc', { mode: 'read', owner: 'GET /doc' }));
    await queueLength(zkView, `${rootPath}/doc`, 2);
    handles.push(await a.semaphore('pool', { permits: 2, owner: 'lease-1' }));
    handles.push(await b.semaphore('pool', { permits: 2, owner: 'lease-2' }));
    waits.push(c.semaphore('pool', { permits: 2, owner: 'lease-3' }));
    await queueLength(zkView, `${rootPath}/pool`, 3);
    for (const wait of waits) wait.catch(() => undefined); // a failed test closes the apps under them

    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(viewUrl);
    await page.waitForSelector('section.lock[data-resource="pool"] tbody tr:nth-child(3)');
    expect(await page.textContent('#root')).toBe(rootPath);
    const kinds = Object.fromEntries((await shownLocks(page)).map((lock) => [lock.resource, lock.kind]));
    expect(kinds).toEqual({ doc: 'read/write', 'orders/42': 'exclusive', pool: 'semaphore (2 permits)' });
    await expectPageMatchesZooKeeper(page, zkView, { doc: 1, 'orders/42': 1, pool: 2 });
    const modes = (await shownLocks(page)).map((lock) => lock.rows.map((row) => row.mode));
    expect(modes).toEqual([['write', 'read'], ['exclusive', 'exclusive', 'exclusive'], ['semaphore', 'semaphore', 'semaphore']]);
    if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // The next holder of orders/42 appears on the same page: no reload (the marker survives).
    await page.evaluate("window.liveViewMarker = 'same page'");
    const readAt = await page.getAttribute('#updated', 'data-read-at');
    await handles[0]!.release();
    // The page's own CSP forbids the string evaluation waitForFunction uses: wait with locators.
    await page.locator('section.lock[data-resource="orders/42"] tr[data-role="holder"] td[data-col="owner"]', { hasText: /^job-b$/ }).waitFor();
    expect(await page.evaluate('window.liveViewMarker')).toBe('same page');
    expect(await page.getAttribute('#updated', 'data-read-at')).not.toBe(readAt);
    await queueLength(zkView, ordersPath, 2);
    await expect.poll(() => page.locator('section.lock[data-resource="orders/42"] tbody tr').count(), { timeout: 30_000 }).toBe(2);
    await expectPageMatchesZooKeeper(page, zkView, { doc: 1, 'orders/42': 1, pool: 2 });
    await page.close();

    for (const handle of handles.slice(1)) await handle.release();
    for (const wait of waits) await (await wait).release();
  });

  it("shows locks in Curator's and kazoo's layouts (nodes our library makes) at its paths and scan roots beside its own, by their rules, and a path of two layouts as unreadable", async () => {
    const [a, b, c] = lockers as [LockService, LockService, LockService];
    const zkView = await connect();
    const scanned = uniqueRoot('scanned');
    const named = `${uniqueRoot('named')}/doc`;
    const url = `${await viewerApp({ refreshMs: 250, scan: [{ root: scanned }], paths: [{ zkPath: named, layout: 'curator' }] })}/zk-locks`;
    // Nodes named as Curator's and kazoo's clients name them: a holder and a waiter each.
    const invoice = { layout: 'curator', zkPath: `${scanned}/invoice` } as const;
    const report = { layout: 'kazoo', zkPath: `${scanned}/report` } as const;
    const handles: LockHandle[] = [await a.acquire('invoice', { ...invoice, owner: 'settle' }), await a.acquire('report', { ...report, mode: 'read', owner: 'read-report' })];
    const waits = [b.acquire('invoice', { ...invoice, owner: 'settle-too' }), c.acquire('report', { ...report, mode: 'write', owner: 'write-report' })];
    handles.push(await c.acquire('doc', { layout: 'curator', zkPath: named, owner: 'edit-doc' }));
    // A node whose data is what Curator writes by default, the client's address: its participant.
    const javaLike = await new QueueLock(zkView, curatorMutexDriver, { rootPath }).acquire('ip', { zkPath: `${scanned}/ip`, data: Buffer.from('10.0.0.7') });
    for (const wait of waits) wait.catch(() => undefined); // a failed test closes the apps under them
    await queueLength(zkView, invoice.zkPath, 2);
    await queueLength(zkView, report.zkPath, 2);
    const session = await zkView.session();
    await session.create(`${scanned}/mixed`, '', 'PERSISTENT');
    await session.create(`${scanned}/mixed/_c_${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}-lock-`, '', 'EPHEMERAL_SEQUENTIAL');
    await session.create(`${scanned}/mixed/${'f'.repeat(32)}__lock__`, '', 'EPHEMERAL_SEQUENTIAL');

    const data = (await (await fetch(`${url}/data`)).json()) as LockViewData;
    // After the locks under rootPath (none here), by path.
    const ip = `${scanned}/ip`;
    const byPath = [named, invoice.zkPath, report.zkPath, ip].sort();
    const kinds: Record<string, [string, string]> = {
      [named]: ['curator', 'exclusive'],
      [invoice.zkPath]: ['curator', 'exclusive'],
      [report.zkPath]: ['kazoo', 'read/write'],
      [ip]: ['curator', 'exclusive'],
    };
    expect(data.locks.map((lock) => [lock.path, lock.layout, lock.kind])).toEqual(byPath.map((path) => [path, ...kinds[path]!]));
    expect(data.unreadable?.map((item) => item.path)).toEqual([`${scanned}/mixed`]);

    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector(`section.lock[data-resource="${report.zkPath}"] tbody tr:nth-child(2)`);
    const shown = Object.fromEntries((await shownLocks(page)).map((lock) => [lock.resource, lock]));
    expect(Object.keys(shown)).toEqual(byPath);
    expect([named, invoice.zkPath, report.zkPath].map((path) => shown[path]!.kind)).toEqual(['curator exclusive', 'curator exclusive', 'kazoo read/write']);
    // Each path's nodes as ZooKeeper has them, in the client's order: holder first.
    for (const [path, owners] of [[invoice.zkPath, ['settle', 'settle-too']], [report.zkPath, ['read-report', 'write-report']]] as const) {
      const nodes = (await childrenOf(zkView, path)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
      expect(shown[path]!.rows.map((row) => [row.role, row.node, row.owner])).toEqual([
        ['holder', nodes[0], owners[0]],
        ['waiter #1', nodes[1], owners[1]],
      ]);
    }
    expect(shown[report.zkPath]!.rows.map((row) => row.mode)).toEqual(['read', 'write']);
    expect(data.locks.find((lock) => lock.path === ip)!.holders.map((node) => [node.participant, node.owner])).toEqual([['10.0.0.7', undefined]]);
    expect(shown[ip]!.rows.map((row) => [row.role, row.owner, row.session])).toEqual([['holder', '10.0.0.7', zkView.sessionId]]);
    expect(await page.textContent('p.unreadable')).toMatch(new RegExp(`^Not read: ${scanned}/mixed: it holds nodes of Curator's InterProcessMutex`));
    await page.close();

    for (const handle of handles) await handle.release();
    for (const wait of waits) await (await wait).release();
    await javaLike.release();
  });

  it("shows an election as such: its leader, then its followers in line with their ids; a LeaderLatch in Curator's layout (nodes our library makes) under a scan root as a Curator election", async () => {
    const [a, b, c] = lockers as [LockService, LockService, LockService];
    // A steady session: the latch's participant keeps its node (and its session) for the whole test.
    const zkView = await connect(STEADY_SESSION);
    const scanned = uniqueRoot('elections');
    const latch = `${scanned}/latch`;
    const url = `${await viewerApp({ refreshMs: 250, scan: [{ root: scanned }] })}/zk-locks`;
    const groupPath = `${rootPath}/${encodeResource('relay')}`;
    const elections = [a.elect('relay', { id: 'relay-a' })];
    await queueLength(zkView, groupPath, 1);
    elections.push(b.elect('relay', { id: 'relay-b' }));
    await queueLength(zkView, groupPath, 2);
    elections.push(c.elect('relay', { id: 'relay-c' }));
    await queueLength(zkView, groupPath, 3);
    await elections[0]!.leadership();
    // Curator's LeaderLatch nodes, the participant id as their data, as a Java service makes them.
    const java = new Candidacy(zkView, 'latch', { id: 'java-1', layout: 'curator', zkPath: latch }, { rootPath });
    await java.leadership();

    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(url);
    await page.waitForSelector(`section.lock[data-resource="relay"] tbody tr:nth-child(3)`);
    await page.waitForSelector(`section.lock[data-resource="${latch}"] tbody tr`);
    const shown = Object.fromEntries((await shownLocks(page)).map((lock) => [lock.resource, lock]));
    expect([shown.relay!.kind, shown[latch]!.kind]).toEqual(['election', 'curator election']);
    // The group's nodes as ZooKeeper has them, in sequence order: the first leads; each id is its node's owner.
    const queue = await queueInZooKeeper(zkView, 'relay');
    expect(queue.map((node) => node.owner)).toEqual(['relay-a', 'relay-b', 'relay-c']);
    expect(shown.relay!.rows.map((row) => [row.role, row.mode, row.node, row.session, row.owner])).toEqual(
      queue.map((node, i) => [i === 0 ? 'leader' : `follower #${i}`, 'election', node.node, node.session, node.owner]),
    );
    expect(shown[latch]!.rows.map((row) => [row.role, row.mode, row.owner, row.session])).toEqual([['leader', 'election', 'java-1', zkView.sessionId]]);
    expect(shown[latch]!.rows[0]!.node).toMatch(/^_c_[0-9a-f-]{36}-latch-\d{10}$/);

    // The next leader appears on the same page once the leader leaves.
    await elections[0]!.close();
    await page.locator('section.lock[data-resource="relay"] tr[data-role="holder"] td[data-col="owner"]', { hasText: /^relay-b$/ }).waitFor();
    await expect.poll(async () => (await shownLocks(page)).find((lock) => lock.resource === 'relay')?.rows.map((row) => [row.role, row.owner]), { timeout: 30_000 }).toEqual([
      ['leader', 'relay-b'],
      ['follower #1', 'relay-c'],
    ]);
    await page.close();
    await Promise.all([...elections.slice(1).map((election) => election.close()), java.close()]);
  });

  it('shows owners as text, never as HTML', async () => {
    const hostile = '<img src=x onerror="window.pwned = 1">';
    const handle = await lockers[0]!.acquire('xss', { owner: hostile });
    const page = await browser.newPage();
    await page.goto(viewUrl);
    await page.waitForSelector('section.lock[data-resource="xss"]');
    expect(await page.textContent('section.lock[data-resource="xss"] td[data-col="owner"]')).toBe(hostile);
    expect(await page.$$('section.lock img')).toHaveLength(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    await page.close();
    await handle.release();
  });

  it('says so on the page when the data cannot be read, and keeps the last table', async () => {
    const page = await browser.newPage();
    let failing = false;
    await page.route('**/zk-locks/data', (route) => (failing ? route.fulfill({ status: 503, body: 'ZooKeeper is down' }) : route.continue()));
    const handle = await lockers[1]!.acquire('kept', { owner: 'still-here' });
    await page.goto(viewUrl);
    await page.waitForSelector('section.lock[data-resource="kept"]');
    failing = true;
    await page.locator('#status.error', { hasText: 'ZooKeeper is down' }).waitFor();
    expect(await page.textContent('section.lock[data-resource="kept"] td[data-col="owner"]')).toBe('still-here');
    await page.close();
    await handle.release();
  });

  it('is not served unless ZkLockViewModule is imported, and obeys its path and guards', async () => {
    const without = await viewerApp(undefined);
    expect((await fetch(`${without}/zk-locks`)).status).toBe(404);
    expect((await fetch(`${without}/zk-locks/data`)).status).toBe(404);

    @Injectable()
    class DenyAll implements CanActivate {
      canActivate(): boolean {
        return false;
      }
    }
    const guarded = await viewerApp({ path: '/admin/locks/', guards: [DenyAll] });
    expect((await fetch(`${guarded}/admin/locks`)).status).toBe(403);
    expect((await fetch(`${guarded}/admin/locks/data`)).status).toBe(403);
    expect((await fetch(`${guarded}/zk-locks`)).status).toBe(404);

    const open = await viewerApp({ path: 'admin/locks' });
    const page = await fetch(`${open}/admin/locks`);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*connect-src 'self'/);
    expect(await page.text()).not.toMatch(/<script src=|<link |https?:\/\//); // self-contained
    const data = (await (await fetch(`${open}/admin/locks/data`)).json()) as { rootPath: string };
    expect(data.rootPath).toBe(rootPath);
  });

  it('refuses bad options at registration, naming the option, and an application without ZkLockModule at start-up', async () => {
    expect(() => ZkLockViewModule.register({ path: 'a b' })).toThrow(/"path"/);
    expect(() => ZkLockViewModule.register({ refreshMs: 5 })).toThrow(/"refreshMs".*from 100 to 2147483647/);
    expect(() => ZkLockViewModule.register({ scan: [{ root: 'billing' }] })).toThrow(/"scan\[0\]\.root": must be an absolute ZooKeeper path/);
    expect(() => ZkLockViewModule.register({ paths: [{ zkPath: '/billing/x', layout: 'java' as 'curator' }] })).toThrow(/"paths\[0\]\.layout"/);
    const moduleRef = await Test.createTestingModule({ imports: [ZkLockViewModule.register()] }).compile();
    const application = moduleRef.createNestApplication({ logger: false });
    await expect(application.init()).rejects.toThrow(/found no LockService: import ZkLockModule\.forRoot/);
    await application.close();
  });
});

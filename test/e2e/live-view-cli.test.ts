import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LockViewData } from '../../lib/live-view/view-model.js';
import { Candidacy } from '../../lib/recipes/candidacy.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { QueueLock } from '../../lib/recipes/queue-lock.js';
import { Semaphore } from '../../lib/recipes/semaphore.js';
import { curatorMutexDriver } from '../../lib/queue/foreign-drivers.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { encodeResource } from '../../lib/zookeeper/paths.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { childrenOf, exists, queueLength, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';
import { CLI, runCli } from '../support/cli-run.js';

const SOURCES = ['lib/cli', 'lib/live-view'];

const owner = (name: string) => ({ data: Buffer.from(JSON.stringify({ host: 'cli-host', pid: 7, owner: name })) });

describe('nestjs-zk-lock inspect (the built CLI) against a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const open = useConnections(zk, STEADY_SESSION);
  // The holders and waiters live while CLI processes start beside them, which on a busy machine can
  // hold up this process for longer than a 1.5 s session's 375 ms lease: their sessions ended and
  // they queued again (other holders, other sessions, fewer waiters than the test made).
  const connect = () => open(STEADY_SESSION);
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before this test (npm test does).`);
    const built = statSync(CLI).mtimeMs;
    for (const dir of SOURCES) {
      for (const file of readdirSync(dir)) {
        if (statSync(join(dir, file)).mtimeMs > built) throw new Error(`${join(dir, file)} is newer than ${CLI}: run \`npm run build\`.`);
      }
    }
  });

  /** A holder and two waiters from three sessions on "orders/1", and a 2-permit semaphore with one lease. */
  async function takeLocks(rootPath: string): Promise<{ a: ZkConnection; b: ZkConnection; c: ZkConnection; held: GrantedLock[]; waiting: Promise<GrantedLock>[] }> {
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const held = [await new FairLock(a!, { rootPath }).acquire('orders/1', owner('job-a'))];
    // One at a time, so that the queue order is known: b, then c.
    const queue = `${rootPath}/${encodeResource('orders/1')}`;
    const waiting = [new FairLock(b!, { rootPath }).acquire('orders/1', owner('job-b'))];
    await queueLength(a!, queue, 2);
    waiting.push(new FairLock(c!, { rootPath }).acquire('orders/1', owner('job-c')));
    await queueLength(a!, queue, 3);
    held.push(await new Semaphore(b!, { rootPath, permits: 2 }).acquire('pool', owner('lease')));
    // A failed test closes the connections under the waiters: that rejection is not the failure.
    for (const wait of waiting) wait.catch(() => undefined);
    return { a: a!, b: b!, c: c!, held, waiting };
  }

  it('prints a table of every lock, holder first and waiters in queue order, matching ZooKeeper', async () => {
    const rootPath = uniqueRoot('cli');
    const { a, b, c, held, waiting } = await takeLocks(rootPath);
    const result = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^2 locks under ${rootPath}, read at \\d{4}-`));
    const rows = lines.slice(3).map((line) => line.trim().split(/\s{2,}/));
    expect(lines[2]).toMatch(/^RESOURCE\s+KIND\s+ROLE\s+MODE\s+OWNER\s+HOST\s+PID\s+SESSION\s+IN QUEUE FOR$/);
    expect(rows.map((row) => row.slice(0, -1))).toEqual([
      ['orders/1', 'exclusive', 'holder', 'exclusive', 'job-a', 'cli-host', '7', a.sessionId],
      ['waiter #1', 'exclusive', 'job-b', 'cli-host', '7', b.sessionId],
      ['waiter #2', 'exclusive', 'job-c', 'cli-host', '7', c.sessionId],
      ['pool', 'semaphore (2 permits)', 'holder', 'semaphore', 'lease', 'cli-host', '7', b.sessionId],
    ]);
    for (const row of rows) expect(row.at(-1)).toMatch(/^\d+(\.\d)? (ms|s)$|min|h /);
    // The sessions in the table are the owners of the nodes ZooKeeper has, in sequence order.
    const queue = await childrenOf(a, `${rootPath}/${encodeResource('orders/1')}`);
    const bySequence = queue.sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    expect(bySequence.map((node) => node.split('-')[1])).toEqual([a.sessionId, b.sessionId, c.sessionId]);
    for (const lock of held) await lock.release();
    await Promise.all(waiting.map(async (p) => (await p).release()));
  });

  it('prints the same overview as JSON with --json, node names and all', async () => {
    const rootPath = uniqueRoot('clijson');
    const { a, held, waiting } = await takeLocks(rootPath);
    const result = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath, '--json']);
    expect(result.code).toBe(0);
    const view = JSON.parse(result.stdout) as LockViewData;
    expect(view.rootPath).toBe(rootPath);
    expect(view.locks.map((lock) => [lock.resource, lock.kind, lock.permits])).toEqual([
      ['orders/1', 'exclusive', undefined],
      ['pool', 'semaphore', 2],
    ]);
    for (const lock of view.locks) {
      const nodes = [...lock.holders, ...lock.waiters];
      expect(nodes.map((node) => node.node).sort()).toEqual(await childrenOf(a, lock.path));
      for (const node of nodes) expect(node.ageMs).toBeGreaterThanOrEqual(0);
    }
    expect(view.locks[0]!.waiters.map((node) => node.owner)).toEqual(['job-b', 'job-c']);
    for (const lock of held) await lock.release();
    await Promise.all(waiting.map(async (p) => (await p).release()));
  });

  it('with --watch --json prints a line per refresh that follows the queue, and stops on SIGINT with code 0', async () => {
    const rootPath = uniqueRoot('cliwatch');
    const { held, waiting } = await takeLocks(rootPath);
    const child = spawn(process.execPath, [CLI, 'inspect', '--connect', zk.connectString, '--root', rootPath, '--watch', '--json', '--interval', '200']);
    children.push(child);
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (): Promise<LockViewData> => JSON.parse((await lines.next()).value as string) as LockViewData;
    const holderOf = (view: LockViewData) => view.locks.find((lock) => lock.resource === 'orders/1')?.holders[0]?.owner;
    expect(holderOf(await next())).toBe('job-a');
    await held[0]!.release();
    let view = await next();
    while (holderOf(view) === 'job-a') view = await next();
    expect(holderOf(view)).toBe('job-b');
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await held[1]!.release();
    await Promise.all(waiting.map(async (p) => (await p).release()));
  });

  it('with --serve serves the page and the same JSON on 127.0.0.1', async () => {
    const rootPath = uniqueRoot('cliserve');
    const { held, waiting } = await takeLocks(rootPath);
    const child = spawn(process.execPath, [CLI, 'inspect', '--connect', zk.connectString, '--root', rootPath, '--serve', '--port', '0', '--scan', `${rootPath}-elsewhere`]);
    children.push(child);
    const first = (await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()).value as string;
    expect(first).toMatch(new RegExp(`^Serving the live view of ${rootPath} and the locks under ${rootPath}-elsewhere at http`));
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(first)![1]!;
    const page = await fetch(url);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(await page.text()).toContain('<main id="locks">');
    const view = (await (await fetch(`${url}data`)).json()) as LockViewData;
    expect(view.locks.map((lock) => [lock.resource, lock.holders.length, lock.waiters.length])).toEqual([
      ['orders/1', 1, 2],
      ['pool', 1, 0],
    ]);
    expect((await fetch(`${url}elsewhere`)).status).toBe(404);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const lock of held) await lock.release();
    await Promise.all(waiting.map(async (p) => (await p).release()));
  });

  it("shows an election as such: its leader, then its followers in line with their ids; a LeaderLatch in Curator's layout (nodes our library makes) at --path or under --scan too", async () => {
    const rootPath = uniqueRoot('clielect');
    const latch = `${rootPath}-svc/latch`;
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const joined: Candidacy[] = [];
    // One at a time, so that the queue order is the join order.
    for (const [i, connection] of [a!, b!, c!].entries()) {
      joined.push(new Candidacy(connection, 'relay', { id: `p${i}` }, { rootPath }));
      await queueLength(a!, `${rootPath}/relay`, i + 1);
    }
    // Curator's LeaderLatch nodes (`_c_<uuid>-latch-<seq>`, the id as data), as a Java service makes them.
    for (const [i, connection] of [b!, c!].entries()) {
      joined.push(new Candidacy(connection, 'latch', { id: `java-${i}`, layout: 'curator', zkPath: latch }, { rootPath }));
      await queueLength(a!, latch, i + 1);
    }
    await Promise.all([joined[0]!.leadership(), joined[3]!.leadership()]);

    const result = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath, '--path', latch]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^2 locks \\(1 under ${rootPath}, 1 at other paths\\), read at `));
    // Empty cells (a Curator node has no host or pid) fold into the spaces around them.
    const rows = lines.slice(3).map((line) => line.trim().split(/\s{2,}/).slice(0, -1));
    const host = hostname();
    const pid = String(process.pid);
    expect(rows).toEqual([
      ['relay', 'election', 'leader', 'election', 'p0', host, pid, a!.sessionId],
      ['follower #1', 'election', 'p1', host, pid, b!.sessionId],
      ['follower #2', 'election', 'p2', host, pid, c!.sessionId],
      [latch, 'curator election', 'leader', 'election', 'java-0', b!.sessionId],
      ['follower #1', 'election', 'java-1', c!.sessionId],
    ]);
    expect(await joined[0]!.participants()).toEqual(['p0', 'p1', 'p2']);

    // Found under --scan by its nodes' names, and in the JSON: the ids as Curator's participants.
    const scanned = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath, '--scan', `${rootPath}-svc`, '--json']);
    expect(scanned.code).toBe(0);
    const view = JSON.parse(scanned.stdout) as LockViewData;
    expect(view.locks.map((lock) => [lock.path, lock.layout, lock.kind])).toEqual([
      [`${rootPath}/relay`, 'nestjs-zk-lock', 'election'],
      [latch, 'curator', 'election'],
    ]);
    const curator = view.locks[1]!;
    expect([...curator.holders, ...curator.waiters].map((node) => [node.participant, node.mode])).toEqual([
      ['java-0', 'election'],
      ['java-1', 'election'],
    ]);
    const nodes = (await childrenOf(a!, latch)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    expect([curator.holders[0]!.node, curator.waiters[0]!.node]).toEqual(nodes);
    expect(nodes.every((node) => /^_c_[0-9a-f-]{36}-latch-\d{10}$/.test(node))).toBe(true);
    expect(view.locks[0]!.waiters.map((node) => node.owner)).toEqual(['p1', 'p2']);
    await Promise.all(joined.map((candidacy) => candidacy.close()));
  });

  it('says what to fix, with a non-zero exit, for bad arguments and an unreachable ZooKeeper', async () => {
    const noCommand = await runCli([]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toMatch(/Missing command.*inspect.*--help/);
    const noConnect = await runCli(['inspect']);
    expect(noConnect.code).toBe(2);
    expect(noConnect.stderr).toMatch(/--connect is required/);
    const badConnect = await runCli(['inspect', '--connect', 'not a host list']);
    expect(badConnect.code).toBe(2);
    expect(badConnect.stderr).toMatch(/Bad --connect: .*host:port/);
    const badInterval = await runCli(['inspect', '--connect', zk.connectString, '--watch', '--interval', 'soon']);
    expect(badInterval.code).toBe(2);
    expect(badInterval.stderr).toMatch(/--interval must be a whole number/);
    const unknown = await runCli(['inspect', '--connect', zk.connectString, '--colour']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--colour.*--help/);
    // Port 1 on the loopback: nothing listens there.
    const unreachable = await runCli(['inspect', '--connect', '127.0.0.1:1', '--timeout', '500']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/Could not connect to ZooKeeper at "127\.0\.0\.1:1".*check --connect, or raise --timeout/);
    expect(unreachable.stdout).toBe('');
    const layoutAlone = await runCli(['inspect', '--connect', zk.connectString, '--layout', 'curator']);
    expect(layoutAlone.code).toBe(2);
    expect(layoutAlone.stderr).toMatch(/--layout needs --path or --scan/);
    const badLayout = await runCli(['inspect', '--connect', zk.connectString, '--scan', '/billing', '--layout', 'java']);
    expect(badLayout.code).toBe(2);
    expect(badLayout.stderr).toMatch(/--layout must be nestjs-zk-lock, curator or kazoo, got "java"/);
    const scanUnderRoot = await runCli(['inspect', '--connect', zk.connectString, '--root', '/locks', '--scan', '/locks/x']);
    expect(scanUnderRoot.code).toBe(2);
    expect(scanUnderRoot.stderr).toMatch(/Bad --scan: .*"scan\[0\]\.root": is at or under rootPath \(\/locks\), whose locks are listed anyway: give a root outside it/);
    const twoPaths = await runCli(['revoke', '--connect', zk.connectString, '--path', '/a/x', '--path', '/a/y']);
    expect(twoPaths.code).toBe(2);
    expect(twoPaths.stderr).toMatch(/revoke needs one lock/);
    const scanOnRevoke = await runCli(['revoke', '--connect', zk.connectString, '--path', '/a/x', '--scan', '/a']);
    expect(scanOnRevoke.code).toBe(2);
    expect(scanOnRevoke.stderr).toMatch(/--scan is an option of inspect/);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--root <path>.*default: \/locks/);
    expect(help.stdout).toMatch(/--scan <path>\s+also every lock among the children of this path/);
  });

  it('reads a missing root as no locks and does not create it', async () => {
    const connection = await connect();
    const rootPath = uniqueRoot('clinone');
    const result = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`No lock is held or waited for under ${rootPath}.\n`);
    expect(await exists(connection, rootPath)).toBe(false);
  });

  it('says so for a --path with no holder or waiter (missing, or a free lock), and names none it did show', async () => {
    const rootPath = uniqueRoot('clipath');
    const missing = `${rootPath}-svc/nothing`;
    const result = await runCli(['inspect', '--connect', zk.connectString, '--root', rootPath, '--path', missing, '--layout', 'curator']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`No holder or waiter at ${missing}.\n`);
  });

  it("revoke: asks a revocable holder in Curator's layout (ours; --json lists the node); forces a plain holder of ours after --force-after, and the waiter gets the lock", async () => {
    const [a, b] = await Promise.all([connect(), connect()]);
    const rootPath = uniqueRoot('clirevoke');
    const zkPath = `${rootPath}-svc/lock`;
    const curatorHolder = await new QueueLock(a!, curatorMutexDriver, { rootPath }).acquire('svc', { zkPath, onReleaseRequest: 'notify' });
    const heard = new Promise((resolve) => curatorHolder.releaseRequested.addEventListener('abort', resolve, { once: true }));
    const asked = await runCli(['revoke', '--connect', zk.connectString, '--path', zkPath, '--layout', 'curator', '--json']);
    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as { requested: string[]; notAsked: string[]; forced: string[] };
    expect(result.requested).toEqual([curatorHolder.path]);
    await heard; // the holder heard it (the test times out otherwise)
    const wrongLayout = await runCli(['revoke', '--connect', zk.connectString, '--path', zkPath]);
    expect(wrongLayout.code).toBe(1);
    expect(wrongLayout.stderr).toMatch(/'nestjs-zk-lock' does not match the lock at .*Curator's InterProcessMutex.*the CLI's --layout/);
    await curatorHolder.release();

    const plain = await new FairLock(a!, { rootPath }).acquire('orders/1');
    const waiting = new FairLock(b!, { rootPath }).acquire('orders/1');
    await queueLength(a!, `${rootPath}/${encodeResource('orders/1')}`, 2);
    const forced = await runCli(['revoke', '--connect', zk.connectString, '--root', rootPath, '--resource', 'orders/1', '--force-after', '100']);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`not revocable (taken without onReleaseRequest): ${plain.path} (forced)`);
    await (await waiting).release();
    await plain.release().catch(() => undefined);

    const noLock = await runCli(['revoke', '--connect', zk.connectString, '--root', rootPath]);
    expect(noLock.code).toBe(2);
    expect(noLock.stderr).toMatch(/either --resource <name> \(under --root\) or --path <zkPath>/);
    const wrongFlag = await runCli(['revoke', '--connect', zk.connectString, '--resource', 'x', '--watch']);
    expect(wrongFlag.code).toBe(2);
    expect(wrongFlag.stderr).toMatch(/--watch is an option of inspect/);
  });
});

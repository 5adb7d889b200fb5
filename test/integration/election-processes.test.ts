/**
 * Leader election across real processes: three Node processes (test/support/election-worker.ts,
 * compiled by `npm run build:sample`) each `elect('relay', { id })` on one real ZooKeeper, session
 * timeout T = 2 s. A leader acts every 20 ms, each act guarded by `assertHeld(0)`, and reports it.
 * SIGKILL the leader: the next in line leads. SIGSTOP the new leader past its session: the third
 * is elected, and the stopped one, once resumed, never acts again (its first report is a failed
 * assertHeld or the revocation). Every term's token is above the one before it.
 *
 * Times are the machine's clock (`performance.timeOrigin + performance.now()`), shared by the
 * processes. Durations appear only as generous timeouts, never as claims about speed.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isolatedForkOptions } from '../../lib/testing/isolated-spawn.js';
import type { ElectionWorkerMessage, ElectionWorkerTask } from '../support/election-worker.js';
import { uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

const WORKER = fileURLToPath(new URL('../../build/test/support/election-worker.js', import.meta.url));
/** The workers' session timeout, T. */
const T = 2000;
/**
 * The workers' lease margin: a lease of 1400 ms after the latest answer rather than the default
 * T/4 (500 ms), so that a busy machine (the test shares two cores with others) does not end a term
 * the test did not end. The pause (at least 1.5 T) outlasts either.
 */
const LEASE_MARGIN_MS = 600;

const clock = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Message = ElectionWorkerMessage;

/** One worker process and everything it reported, in the order received. */
class Participant {
  readonly messages: Message[] = [];
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private readonly listeners = new Set<() => void>();
  private exitedWith: string | undefined;

  constructor(
    readonly id: string,
    task: ElectionWorkerTask,
  ) {
    this.child = fork(WORKER, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], ...isolatedForkOptions() });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exitedWith = signal ?? `code ${code}`;
        this.notify();
        resolve();
      }),
    );
    this.child.on('message', (message: Message) => {
      this.messages.push(message);
      this.notify();
    });
    this.child.send(task);
  }

  get pid(): number {
    return this.child.pid!;
  }

  of<K extends Message['type']>(type: K): Extract<Message, { type: K }>[] {
    return this.messages.filter((m): m is Extract<Message, { type: K }> => m.type === type);
  }

  /** The first message (received so far or to come) that `matches`; rejects after `timeoutMs`. */
  waitFor<M extends Message>(matches: (m: Message) => m is M, timeoutMs: number, what: string): Promise<M>;
  waitFor(matches: (m: Message) => boolean, timeoutMs: number, what: string): Promise<Message>;
  waitFor(matches: (m: Message) => boolean, timeoutMs: number, what: string): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const failed = this.messages.find((m) => m.type === 'failed');
        const found = this.messages.find(matches);
        if (found) done(() => resolve(found));
        else if (failed) done(() => reject(new Error(`${this.id} failed: ${(failed as { error: string }).error}`)));
        else if (this.exitedWith !== undefined) done(() => reject(new Error(`${this.id} exited (${this.exitedWith}) before ${what}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`${this.id}: no ${what} within ${timeoutMs} ms; it reported ${this.summary()}`))), timeoutMs);
      const done = (settle: () => void): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Leaves the election and exits; SIGKILL after 10 s (or at once when `hard`). */
  async stop(hard = false): Promise<void> {
    if (this.exitedWith !== undefined) return;
    this.child.kill('SIGCONT'); // in case it was left stopped
    if (hard || !this.child.connected) this.child.kill('SIGKILL');
    else this.child.send('stop');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(killer);
  }

  /** What it reported, counted by type, for failure messages. */
  summary(): string {
    const counts = new Map<string, number>();
    for (const m of this.messages) counts.set(m.type, (counts.get(m.type) ?? 0) + 1);
    return [...counts].map(([type, n]) => `${type} × ${n}`).join(', ') || 'nothing';
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

const is =
  <K extends Message['type']>(type: K) =>
  (m: Message): m is Extract<Message, { type: K }> =>
    m.type === type;

describe('leader election across processes (SIGKILL, SIGSTOP) on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const started: Participant[] = [];

  afterEach(async () => {
    await Promise.all(started.map((p) => p.stop()));
    started.length = 0;
  });

  function join(id: string, rootPath: string): Participant {
    const participant = new Participant(id, { connect: zk.connectString, rootPath, group: 'relay', id, sessionTimeoutMs: T, leaseMarginMs: LEASE_MARGIN_MS });
    started.push(participant);
    return participant;
  }

  it('one leads; the leader killed, the next in line leads; the new one stopped past its session, the third leads and the stopped one never acts again', async () => {
    if (!existsSync(WORKER)) throw new Error(`${WORKER} is missing: run \`npm run build:sample\` first`);
    const rootPath = uniqueRoot('election-processes');

    // Join in turn, each once the one before it is listed: the queue order is p0, p1, p2.
    const all: Participant[] = [];
    for (const id of ['p0', 'p1', 'p2']) {
      const participant = join(id, rootPath);
      await participant.waitFor(is('queued'), 30_000, 'queued');
      all.push(participant);
    }
    const [a, b, c] = all as [Participant, Participant, Participant];
    expect(c.of('queued')[0]!.participants).toEqual(['p0', 'p1', 'p2']);

    // One leads: p0, acting; the others wait.
    const first = await a.waitFor(is('elected'), 3 * T, 'elected');
    await a.waitFor((m) => m.type === 'acted' && m.at > first.at + 200, 3 * T, 'acting for a while');
    expect(b.of('elected')).toEqual([]);
    expect(c.of('elected')).toEqual([]);
    expect(a.of('revoked')).toEqual([]);

    // SIGKILL the leader: its session expires and the next in line (p1) leads.
    const killedAt = clock();
    a.signal('SIGKILL');
    await a.exited;
    const second = await b.waitFor(is('elected'), 3 * T, `elected within 3 T of p0's SIGKILL`);
    expect(second.at).toBeGreaterThan(killedAt);
    expect(c.of('elected')).toEqual([]);
    await b.waitFor((m) => m.type === 'acted' && m.at > second.at + 200, 3 * T, 'acting for a while');

    // SIGSTOP p1 for 1.5 T, and on until p2 is elected (bounded), so that p1 resumes when someone
    // else leads; then SIGCONT.
    const stoppedAt = clock();
    b.signal('SIGSTOP');
    await sleep(1.5 * T);
    const third = await c.waitFor(is('elected'), 3 * T, `elected within 4.5 T of p1's SIGSTOP`);
    const resumedAt = clock();
    b.signal('SIGCONT');
    expect(third.at).toBeGreaterThan(stoppedAt);

    // p1's first report after it resumed: the failed assertion or the revocation, never an act.
    const afterResume = await b.waitFor((m) => m.type !== 'queued' && 'at' in m && m.at >= resumedAt, 3 * T, 'a report after SIGCONT');
    expect(['assert-failed', 'revoked'], `p1's first report after SIGCONT`).toContain(afterResume.type);
    const revoked = await b.waitFor(is('revoked'), 3 * T, 'revoked after SIGCONT');
    expect(revoked.end).toBe('lost');
    // Nothing p1 did as leader came after p2 was elected.
    expect(b.of('acted').filter((m) => m.at >= third.at)).toEqual([]);
    // p2 leads on, p1 queued behind it in a new session.
    await c.waitFor((m) => m.type === 'acted' && m.at > revoked.at, 3 * T, 'acting after p1 was revoked');
    expect(c.of('revoked')).toEqual([]);

    // Every term's token is above the one before it.
    const elected = [a, b, c].flatMap((p) => p.of('elected')).sort((x, y) => x.at - y.at);
    expect(elected.map((m) => m.token)).toEqual([first.token, second.token, third.token]);
    for (let i = 1; i < elected.length; i++) expect(BigInt(elected[i]!.token)).toBeGreaterThan(BigInt(elected[i - 1]!.token));

    console.log(
      `election-processes: p0 elected (token ${first.token}); SIGKILL → p1 elected after ${Math.round(second.at - killedAt)} ms (token ${second.token}); ` +
        `SIGSTOP p1 for ${Math.round(resumedAt - stoppedAt)} ms → p2 elected after ${Math.round(third.at - stoppedAt)} ms (token ${third.token}); ` +
        `p1's first report after SIGCONT: ${afterResume.type}; revoked (${revoked.reason}, ${revoked.end}) ${Math.round(revoked.at - resumedAt)} ms after SIGCONT`,
    );
  });
});

/**
 * Real Apache Curator and kazoo peers for the polyglot tests: one JVM (test/peers/java/CuratorPeer.java)
 * or one Python (test/peers/python/kazoo_peer.py) per test file, each hosting named workers, one
 * ZooKeeper session each, driven by a line protocol. `scripts/ensure-peers.sh` installs what they need.
 *
 * Commands (one per line; `[options]` are `key=value` words):
 *   new <worker> <connectString> [session=MS]                        -> OK <worker> <0xsessionId>
 *   acquire <worker> <kind> <path> [timeout=MS] [revocable=report|release] [leases=N] [extra=P,..] [id=X]
 *        -> QUEUED <worker> <node>  (its first sequential node now exists, before the decision)
 *        -> ACQUIRED <worker> <node> (the node that stands for the hold: lock node or semaphore lease)
 *         | TIMEOUT <worker>  (timeout=0: try once)  | CANCELLED <worker>
 *   release <worker> [<kind> <path>]  (default: the lock acquired last)  -> RELEASED <worker> <node>
 *   increment <worker> <kind> <lockPath> <counterPath> <insidePath> <n> [options]
 *        n times: acquire; create EPHEMERAL insidePath (NodeExists: -> OVERLAP <worker> <insidePath>);
 *        read the counter (decimal text), pause 2 ms, write it + 1 (any version); delete; release
 *        -> DONE <worker> <n>
 *   revoke <worker> <nodePath>   (Curator's Revoker.attemptRevoke: `__REVOKE__` data)  -> REVOKE-SENT <worker> <nodePath>
 *   cancel <worker>   (abandons a waiting acquire)      close <worker> -> CLOSED <worker>      quit -> BYE
 *   latch <worker> <path> [id=X] [inside=P]   (leader election, one per worker: Curator LeaderLatch(client,
 *        path, X); kazoo client.Election(path, X) run on a thread of its own; X defaults to "")
 *        -> QUEUED <worker> <node>  (the latch's node, a path, once it exists: Curator's getOurPath(),
 *           `<path>/_c_<uuid>-latch-<seq>`; kazoo's Lock node, `<path>/<hex>__lock__<seq>`)
 *        later, unasked: LEADER <worker>  (isLeader / the leader function; with inside=, P is created
 *           EPHEMERAL first, and a P another session holds -> OVERLAP <worker> <P> before LEADER)
 *           NOT-LEADER <worker>  (notLeader / the leader function returning: on unlatch, or Curator's
 *           notLeader on a suspended or lost connection)
 *   unlatch <worker>   (deletes P if this latch created it and it is still this session's; Curator:
 *        close(NOTIFY_LEADER); kazoo: cancel() and the leader function returns; a leader says NOT-LEADER
 *        first; waits until the latch node is gone)  -> UNLATCHED <worker>
 *   participants <worker> <path>   (a fresh LeaderLatch's getParticipants() / Election's contenders():
 *        the ids in the library's order, leader first; `%`, `,`, spaces escaped as %XX; kazoo creates
 *        a missing path)  -> PARTICIPANTS <worker> <id>,<id>,...
 * Unasked: REVOKE-REQUESTED <worker> <kind> <path> (a revocable Curator hold got `__REVOKE__`; with
 * revocable=release it then releases: RELEASED); LEADER, NOT-LEADER, OVERLAP of a latch.
 * Any failure: ERROR <worker | -> <message>.
 * A worker runs its commands in order (an acquire that waits holds up its later commands, except
 * revoke, cancel and close); different workers run at once.
 * Kinds: curator mutex | read | write | semaphore; kazoo lock | curator-lock | read | write | semaphore
 * (curator-lock: a kazoo Lock naming its nodes `<hex>-lock-<seq>`, which Curator sorts right).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { peerCommand, type PeerLanguage } from './peer-launch.js';

export type { PeerLanguage } from './peer-launch.js';

/** Bound on waiting for one reply (never a measurement: a broken peer fails here, with its last lines). */
const REPLY_TIMEOUT_MS = 30_000;

/** One line a peer printed. */
export interface PeerLine {
  readonly words: readonly string[];
  readonly text: string;
}

interface Waiter {
  match: (line: PeerLine) => boolean;
  resolve: (line: PeerLine) => void;
  reject: (error: Error) => void;
}

/** A running peer process. Lines nobody has waited for yet are kept until someone does. */
export class PeerProcess {
  private readonly unread: PeerLine[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly lines: string[] = [];
  private stderr = '';
  private exited: Error | undefined;
  private readonly open = new Set<string>();
  readonly version: Promise<string>;

  private constructor(readonly language: PeerLanguage, private readonly child: ChildProcessWithoutNullStreams) {
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      for (const text of parts) if (text.trim()) this.arrive(text.trim());
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    child.on('exit', (code, signal) => this.fail(`exited (${signal ?? `code ${code}`})`));
    child.on('error', (error) => this.fail(`could not run: ${error.message}`));
    child.stdin.on('error', () => undefined); // a peer that died: reported by 'exit'
    this.version = this.next((l) => l.words[0] === 'READY', 'READY').then((l) => l.words.slice(1).join(' '));
  }

  /** Starts a peer; the Java one is compiled once per test run into the run's temporary directory. */
  static async start(language: PeerLanguage): Promise<PeerProcess> {
    const { command, args } = peerCommand(language);
    const peer = new PeerProcess(language, spawn(command, args, { stdio: 'pipe' }));
    await peer.version;
    return peer;
  }

  /** Sends one command line. */
  send(line: string): void {
    if (this.exited) throw this.exited;
    this.lines.push(`> ${line}`);
    this.child.stdin.write(`${line}\n`);
  }

  /** The first line, unread so far, that matches; waits for it (`signal`: stops waiting, rejecting). */
  next(match: (line: PeerLine) => boolean, what: string, timeoutMs = REPLY_TIMEOUT_MS, signal?: AbortSignal): Promise<PeerLine> {
    const index = this.unread.findIndex(match);
    if (index >= 0) return Promise.resolve(this.unread.splice(index, 1)[0]!);
    if (this.exited) return Promise.reject(this.exited);
    if (signal?.aborted) return Promise.reject(new Error(`${this.language} peer: stopped waiting for ${what}`));
    return new Promise((resolvePromise, rejectPromise) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        signal?.removeEventListener('abort', stop);
        rejectPromise(new Error(`${this.language} peer: no ${what} within ${timeoutMs} ms${this.context()}`));
      }, timeoutMs);
      const settle = <T>(fn: (value: T) => void) => (value: T) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        signal?.removeEventListener('abort', stop);
        fn(value);
      };
      const waiter: Waiter = { match, resolve: settle(resolvePromise), reject: settle(rejectPromise) };
      const stop = () => waiter.reject(new Error(`${this.language} peer: stopped waiting for ${what}`));
      signal?.addEventListener('abort', stop, { once: true });
      this.waiters.add(waiter);
    });
  }

  /**
   * The next of `replies` from `worker`; an `ERROR <worker>` line rejects with the peer's message.
   */
  reply(worker: string, ...replies: string[]): Promise<PeerLine> {
    return this.replyUnless(undefined, worker, ...replies);
  }

  /** As reply, but stops waiting (rejecting) when `signal` aborts first. */
  async replyUnless(signal: AbortSignal | undefined, worker: string, ...replies: string[]): Promise<PeerLine> {
    const match = (l: PeerLine) => l.words[1] === worker && (replies.includes(l.words[0]!) || l.words[0] === 'ERROR');
    const line = await this.next(match, `${replies.join(' or ')} ${worker}`, REPLY_TIMEOUT_MS, signal);
    if (line.words[0] === 'ERROR') throw new Error(`${this.language} peer: ${line.text}${this.context()}`);
    return line;
  }

  /** Starts a worker: its own ZooKeeper session, connected when this resolves. */
  async worker(name: string, connectString: string): Promise<PeerWorker> {
    this.send(`new ${name} ${connectString}`);
    this.open.add(name);
    const ok = await this.reply(name, 'OK');
    return new PeerWorker(this, name, ok.words[2]!);
  }

  /** Closes one worker: its session ends, so its nodes go. */
  async closeWorker(name: string): Promise<void> {
    this.open.delete(name);
    if (this.exited) return;
    this.send(`close ${name}`);
    await this.reply(name, 'CLOSED');
    // Nothing of this worker reaches a later one of the same name.
    for (let i = this.unread.length - 1; i >= 0; i--) if (this.unread[i]!.words[1] === name) this.unread.splice(i, 1);
  }

  /** Closes every worker still open. */
  async closeWorkers(): Promise<void> {
    await Promise.all([...this.open].map((name) => this.closeWorker(name)));
  }

  /** Ends the peer: quit, then SIGKILL when it has not exited within 10 s. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  }

  private fail(what: string): void {
    if (this.exited) return;
    this.exited = new Error(`${this.language} peer ${what}${this.context()}`);
    for (const waiter of this.waiters) waiter.reject(this.exited);
    this.waiters.clear();
  }

  private arrive(text: string): void {
    this.lines.push(text);
    const line: PeerLine = { words: text.split(' '), text };
    for (const waiter of this.waiters) {
      if (waiter.match(line)) return waiter.resolve(line);
    }
    this.unread.push(line);
  }

  private context(): string {
    const err = this.stderr.trim() ? `\nstderr: ${this.stderr.trim().split('\n').slice(-10).join('\n')}` : '';
    return `\nlast lines:\n  ${this.lines.slice(-12).join('\n  ')}${err}`;
  }
}

/** What an acquire led to. */
export type AcquireOutcome = { readonly acquired: true; readonly node: string } | { readonly acquired: false; readonly reason: 'TIMEOUT' | 'CANCELLED' };

/** An acquire in flight: `queued` once its node exists, `outcome` once it is decided. */
export interface PendingAcquire {
  readonly queued: Promise<string>;
  readonly outcome: Promise<AcquireOutcome>;
  /** The outcome if its reply has arrived, else undefined ("not granted yet"). */
  readonly decided: AcquireOutcome | undefined;
}

/** A latch in flight: `queued` once its node exists, `leader` once it leads. */
export interface PendingLatch {
  /** The latch's node (a path). */
  readonly queued: Promise<string>;
  /**
   * Resolves when this worker leads (LEADER); `overlap` when inside= was held by another session.
   * Rejects when it is unlatched first, or at the reply bound (30 s).
   */
  readonly leader: Promise<{ readonly overlap: boolean }>;
  /** Whether LEADER has arrived (false before; stays true after NOT-LEADER). */
  readonly isLeader: boolean;
}

/** One worker of a peer: one session, taking its commands in order. */
export class PeerWorker {
  /** Stops the waiting for LEADER of this worker's latch once it is unlatched. */
  private latching: AbortController | undefined;

  /** @param sessionId the worker's ZooKeeper session id, as `0x` and hex digits */
  constructor(readonly peer: PeerProcess, readonly name: string, readonly sessionId: string) {}

  /** Sends an acquire; see PendingAcquire. Options are `key=value` words of the protocol. */
  startAcquire(kind: string, path: string, ...options: string[]): PendingAcquire {
    this.peer.send(['acquire', this.name, kind, path, ...options].join(' '));
    const first = this.peer.reply(this.name, 'QUEUED', 'ACQUIRED', 'TIMEOUT', 'CANCELLED');
    const queued = first.then((line) => {
      if (line.words[0] !== 'QUEUED') throw new Error(`${this.peer.language} peer: ${line.text} before QUEUED ${this.name}`);
      return line.words[2]!;
    });
    const outcome = queued.then(async (): Promise<AcquireOutcome> => {
      const line = await this.peer.reply(this.name, 'ACQUIRED', 'TIMEOUT', 'CANCELLED');
      if (line.words[0] === 'ACQUIRED') return { acquired: true, node: line.words[2]! };
      return { acquired: false, reason: line.words[0] as 'TIMEOUT' | 'CANCELLED' };
    });
    let decided: AcquireOutcome | undefined;
    outcome.then((o) => (decided = o)).catch(() => undefined); // the caller awaits `outcome` for failures
    return {
      queued,
      outcome,
      get decided() {
        return decided;
      },
    };
  }

  /** Acquires and waits for the grant; returns the node that stands for the hold. */
  async acquire(kind: string, path: string, ...options: string[]): Promise<string> {
    const outcome = await this.startAcquire(kind, path, ...options).outcome;
    if (!outcome.acquired) throw new Error(`${this.peer.language} peer: ${outcome.reason} ${this.name} acquiring ${kind} ${path}`);
    return outcome.node;
  }

  /** One attempt, not waiting (timeout=0): the node, or undefined when another holds. */
  async tryAcquire(kind: string, path: string, ...options: string[]): Promise<string | undefined> {
    const outcome = await this.startAcquire(kind, path, 'timeout=0', ...options).outcome;
    return outcome.acquired ? outcome.node : undefined;
  }

  /** Releases `kind path`, or the lock acquired last; returns the released node. */
  async release(kind?: string, path?: string): Promise<string> {
    this.peer.send(['release', this.name, ...(kind && path ? [kind, path] : [])].join(' '));
    return (await this.peer.reply(this.name, 'RELEASED')).words[2]!;
  }

  /** Runs the protocol's increment loop; returns how many times this worker found another inside. */
  async increment(kind: string, paths: { lock: string; counter: string; inside: string }, times: number, ...options: string[]): Promise<{ overlaps: number }> {
    this.peer.send(['increment', this.name, kind, paths.lock, paths.counter, paths.inside, times, ...options].join(' '));
    let overlaps = 0;
    while ((await this.peer.reply(this.name, 'OVERLAP', 'DONE')).words[0] === 'OVERLAP') overlaps += 1;
    return { overlaps };
  }

  /** Writes Curator's revocation request (`__REVOKE__`) to a node, as `Revoker.attemptRevoke`. */
  async revoke(nodePath: string): Promise<void> {
    this.peer.send(`revoke ${this.name} ${nodePath}`);
    await this.peer.reply(this.name, 'REVOKE-SENT');
  }

  /** The next of `replies` from this worker, asked for or not (REVOKE-REQUESTED, and RELEASED after it). */
  reply(...replies: string[]): Promise<PeerLine> {
    return this.peer.reply(this.name, ...replies);
  }

  /**
   * Joins a leader election on `path` (Curator LeaderLatch, kazoo Election); see PendingLatch. `id` is
   * the participant id (node data); `inside` a node created EPHEMERAL on becoming leader, deleted on unlatch.
   */
  startLatch(path: string, options: { id?: string; inside?: string } = {}): PendingLatch {
    const words = ['latch', this.name, path];
    if (options.id !== undefined) words.push(`id=${options.id}`);
    if (options.inside !== undefined) words.push(`inside=${options.inside}`);
    this.peer.send(words.join(' '));
    const latching = (this.latching = new AbortController());
    const queued = this.peer.reply(this.name, 'QUEUED').then((line) => line.words[2]!);
    const leader = queued.then(async () => {
      let overlap = false;
      while ((await this.peer.replyUnless(latching.signal, this.name, 'OVERLAP', 'LEADER')).words[0] === 'OVERLAP') overlap = true;
      return { overlap };
    });
    let isLeader = false;
    leader.then(() => (isLeader = true)).catch(() => undefined); // the caller awaits `leader` for failures
    return {
      queued,
      leader,
      get isLeader() {
        return isLeader;
      },
    };
  }

  /** Joins a leader election and waits until this worker leads; returns its latch node. */
  async lead(path: string, options: { id?: string; inside?: string } = {}): Promise<string> {
    const pending = this.startLatch(path, options);
    const [node, { overlap }] = await Promise.all([pending.queued, pending.leader]);
    if (overlap) throw new Error(`${this.peer.language} peer: OVERLAP ${this.name} on ${options.inside} leading ${path}`);
    return node;
  }

  /** Leaves the election (its latch node is gone when this resolves); `wasLeader` when it led until now. */
  async unlatch(): Promise<{ wasLeader: boolean }> {
    this.peer.send(`unlatch ${this.name}`);
    let wasLeader = false;
    while ((await this.peer.reply(this.name, 'NOT-LEADER', 'UNLATCHED')).words[0] === 'NOT-LEADER') wasLeader = true;
    this.latching?.abort(); // a contender that never led: its LEADER will not come
    this.latching = undefined;
    return { wasLeader };
  }

  /** The election's participant ids on `path`, in the library's order: the leader first. */
  async participants(path: string): Promise<string[]> {
    this.peer.send(`participants ${this.name} ${path}`);
    const list = (await this.peer.reply(this.name, 'PARTICIPANTS')).words[2];
    return list === undefined || list === '' ? [] : list.split(',').map((id) => decodeURIComponent(id));
  }

  /** Abandons this worker's waiting acquire (its outcome becomes CANCELLED). */
  cancel(): void {
    this.peer.send(`cancel ${this.name}`);
  }

  /** Ends this worker's session (what it held or queued goes with it). */
  close(): Promise<void> {
    return this.peer.closeWorker(this.name);
  }
}

/** A peer started before this file's tests and stopped after them; its workers are closed after each test. */
export function usePeer(language: PeerLanguage): { readonly peer: PeerProcess } {
  let started: PeerProcess | undefined;
  beforeAll(async () => {
    started = await PeerProcess.start(language);
  });
  afterEach(async () => {
    await started?.closeWorkers();
  });
  afterAll(async () => {
    await started?.stop();
  });
  return {
    get peer(): PeerProcess {
      if (!started) throw new Error(`the ${language} peer is not started (use it inside a test)`);
      return started;
    },
  };
}

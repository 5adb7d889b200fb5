/**
 * The queue internals (Curator's LockInternals), as one waiter's state machine: one acquire in the
 * queue, from its session to a grant, null (noWait) or an error, told to its sink. It creates its
 * node (the protected create, which lists the queue in the same round trip), holds at once when its
 * node is alone in the queue, else asks the driver (placeIn) and watches whom the driver says,
 * lists again when that changes, checks the grant (checkGrant), and removes its node on every way
 * out that is not a grant. Its WaiterHost lends it what the waiters of one client share.
 *
 * Heap rules. A waiting acquire costs this object, its watches and the caller's promise, and
 * nothing else (`npm run bench -- --only heap`: about 2,000 bytes per waiting LockService acquire,
 * most of it the watches and the promise). Each rule below can be checked by reading this file:
 * - no suspended async call while waiting: `run` returns once the watches are set (WATCHING), and
 *   a wake-up starts it again;
 * - every field is set before the constructor returns (one object layout for all waiters);
 * - the attempt's prefix is dropped once it waits (`ownPrefix`): our node's name holds it;
 * - `round` never becomes -0 (`watch` takes the absolute value before adding 1), so it stays a
 *   small integer;
 * - the callback a watch keeps for the whole wait is a bound method (`this.changed.bind(this)`),
 *   not a closure (the closures for the watch's first answer, `onArmed` and `onFailed`, are dropped
 *   once it arrives);
 * - the stop signal's listener is the waiter itself (`handleEvent`), not a closure.
 */
import { ZkConnectionLossError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import type { ChildList, NodeChange, NodeWatch, WatchedStat, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { readChildren } from '../zookeeper/session-retry.js';
import type { LockDriver } from './lock-driver.js';
import { SEQUENCE_DIGITS } from './queue-entry.js';
import { checkGrant } from './grant-check.js';
import type { CreateProgress } from './protected-create.js';
import { placeIn } from './queue-place.js';
import { mayAbort } from './stopper.js';
import type { WaiterHost, WatchingWaiter } from './waiter-host.js';
import type { QueueGrant, QueueSink, WaiterSpec } from './queue.types.js';

/**
 * Queues an entry in `spec.parent` and waits for its turn, telling `sink` once how it ended. A
 * session lost while waiting only means the node died with it: the entry queues again in the next
 * session (a downgrade read, `spec.under` a write, fails instead). `stop` ends the wait, its node
 * removed (or the removal scheduled when disconnected); `noWait` gives up at once (null) when the
 * lock is taken. A sink, not a promise (heap rules, above).
 */
export function waitInQueue(host: WaiterHost, spec: WaiterSpec, sink: QueueSink): void {
  void new QueueWaiter(host, spec, sink).run(FRESH);
}

/** `run` starts with a session (a new attempt)... */
const FRESH = Symbol('fresh');
/** ...or after a watched node changed: list the queue again... */
const RELIST = Symbol('relist');
/** ...or the holder it watched released it to us (`Decision.grantedByWrite`): a grant, without listing... */
const WRITE_GRANT = Symbol('write-grant');
/** ...or goes on after an answer it was waiting for. A run that leaves the waiter watching ends with it. */
const WATCHING = Symbol('watching');

/**
 * One acquire in the queue: its place (the node of the current attempt, in the current session)
 * and, while it waits, its watches. `run` goes from a session, or from a wake-up, to the next wait
 * or to the end (a grant, null, or an error, told to the sink); a watch, the stop signal or the
 * session's end wakes it.
 */
class QueueWaiter implements CreateProgress, WatchingWaiter {
  session: ZkSessionApi | undefined = undefined;
  /** The driver's prefix for this attempt, every node it creates starts with it: kept until it waits (prefixNow). */
  private ownPrefix: string | undefined = undefined;
  /** Our node's name, once known (CreateProgress: the protected create sets it). */
  mine: string | undefined = undefined;
  /** A create was sent whose node may exist even though its name is unknown. */
  createSent = false;
  /** The czxid of the queue's parent, from the last listing: the second part of a grant's token (after the epoch). */
  queueZxid = 0;
  /** What it watches while waiting (one handle, or several for a semaphore's first waiter). */
  private watches: NodeWatch | NodeWatch[] | undefined = undefined;
  /** Counts waits, so that a late answer about an earlier wait is ignored: positive while waiting, negated when it ends. */
  private round = 0;
  /** The current wait is on a holder whose release grants us the lock (`Decision.grantedByWrite`). */
  private grantedByWrite = false;

  readonly parent: string;
  readonly driver: LockDriver;
  readonly data: Buffer;
  readonly stop: AbortSignal;
  private readonly noWait: boolean;
  /** A downgrade read queues in its write's session only: that session's end fails the acquire. */
  private readonly writeSession: ZkSessionApi | undefined;
  /** The token of the write a downgrade read is taken under, which the read carries. */
  private readonly inheritedToken: string | undefined;

  /** Copies what it needs out of `spec`, which it does not keep (heap rules, above). */
  constructor(
    private readonly host: WaiterHost,
    spec: WaiterSpec,
    private readonly sink: QueueSink,
  ) {
    this.parent = spec.parent;
    this.driver = spec.driver;
    this.data = spec.data;
    this.stop = spec.stop;
    this.noWait = spec.noWait;
    this.writeSession = spec.under?.session;
    this.inheritedToken = spec.under?.fencingToken;
  }

  /** The prefix of this attempt's nodes: kept, or the start of our node's name. */
  private prefixNow(): string {
    // A fixed name (createMode 'EPHEMERAL') is its own prefix; ZooKeeper appended the rest to others.
    return this.ownPrefix ?? (this.driver.createMode === 'EPHEMERAL' ? this.mine! : this.mine!.slice(0, -SEQUENCE_DIGITS));
  }

  /**
   * From `resume` (FRESH, RELIST, or the error that ended a wait) to the next wait or the end. Never
   * rejects: every outcome goes to the sink.
   */
  async run(resume: unknown): Promise<void> {
    for (;;) {
      let session = this.session;
      if (!session) {
        try {
          const { live } = this.host.sessions; // a field: no call while the session lives (SessionSource.live)
          session = this.writeSession ?? (live && !live.lost.aborted ? live : await this.host.sessions.session(this.stop));
        } catch (error) {
          this.sink.failed(error);
          return;
        }
        this.session = session;
        this.mine = undefined;
        this.ownPrefix = this.driver.prefix(session.id);
        this.createSent = false;
        resume = FRESH;
      }
      let outcome: QueueGrant | null | typeof WATCHING;
      try {
        // A wait ended by the stop signal or the session's end: the clean-up below starts at once,
        // so the delete is sent before whoever aborted hears of it.
        if (resume === WRITE_GRANT) outcome = this.grant(session, true);
        else if (resume !== FRESH && resume !== RELIST) throw resume;
        else outcome = await this.attempt(session, resume);
      } catch (error) {
        await this.host.creator.abandon(session, { parent: this.parent, name: this.prefixNow() }, this);
        if (this.stop.aborted) return this.sink.failed(this.stop.reason); // whatever else went wrong, the caller stopped first
        if (error instanceof ZkSessionLostError && !this.writeSession) {
          this.session = undefined; // our node died with the session: queue again
          continue;
        }
        return this.sink.failed(error);
      }
      if (outcome === WATCHING) return this.sink.waiting?.();
      const grant = outcome;
      switch (grant && checkGrant(session, this.stop)) {
        case 'stopped':
          // Granted in the same instant the caller gave up: hand the lock straight back.
          this.host.remover.removeSoon(session, grant!.path);
          return this.sink.failed(this.stop.reason);
        case 'session-ended':
          // Granted, then the session ended, or its lease ran out (a granting write read late): the
          // node is gone with the session; queue again in the next one.
          if (this.writeSession) return this.sink.failed(session.lost.reason);
          this.session = undefined;
          continue;
      }
      return this.sink.granted(grant);
    }
  }

  /**
   * The grant of our node, as it stands, with its token's parts (formatted when read). `grantByWrite`
   * (see QueueGrant): when we waited, or saw entries after ours, someone likely waits on us.
   */
  private grant(session: ZkSessionApi, grantByWrite: boolean): QueueGrant {
    const mine = this.mine!;
    return {
      session,
      path: `${this.parent}/${mine}`,
      token: this.inheritedToken ?? { epoch: this.host.tokenEpoch, queueZxid: this.queueZxid, sequence: Number(mine.slice(-SEQUENCE_DIGITS)) },
      queueId: String(this.queueZxid),
      grantByWrite: grantByWrite && this.driver.grantsByWrite,
    };
  }

  /** One attempt in one session, from `resume` to a grant, null (noWait), or a wait (WATCHING). */
  private async attempt(session: ZkSessionApi, resume: typeof FRESH | typeof RELIST): Promise<QueueGrant | null | typeof WATCHING> {
    const { parent, host, driver } = this;
    let list: ChildList | undefined = resume === FRESH ? await this.enqueue(session) : await readChildren(session, parent, this.stop);
    for (;;) {
      this.queueZxid = list.stat.czxid;
      // Our node alone in the queue: every driver grants an entry with none before nor after it
      // (test/unit/lock-drivers.test.ts holds each to it), so the listing needs no parsing.
      const only = list.children.length === 1 ? list.children[0]! : undefined;
      if (only === this.mine && only !== undefined) {
        this.mine = only; // the listing's own string: the create's answer, which our name is a slice of, can go (heap per held lock)
        return this.grant(session, resume === RELIST);
      }
      const prefix = this.prefixNow();
      const place = placeIn(list, prefix, driver, parent);
      list = undefined;
      for (const extra of place.extras) host.remover.removeSoon(session, extra);
      if (place.kind === 'vanished') {
        this.ownPrefix = prefix;
        this.mine = undefined;
        list = await this.enqueue(session);
        continue;
      }
      this.mine = place.mine;
      const path = `${parent}/${place.mine}`;
      if (place.kind === 'granted') {
        if (place.wakeNext) host.poke(session, path, this.data);
        return this.grant(session, resume === RELIST || place.successors);
      }
      if (this.noWait) {
        this.ownPrefix = prefix;
        this.mine = undefined;
        this.createSent = false;
        await host.remover.remove(session, path);
        return null;
      }
      if (!session.connected) await session.whenConnected(this.stop);
      this.stop.throwIfAborted();
      if (session.lost.aborted) throw session.lost.reason;
      this.watch(session, place.watch, place.pokable, place.grantedByWrite);
      return WATCHING;
    }
  }

  /**
   * Creates our node (the protected create) and lists the queue in the same round trip: the
   * listing already holds our node, so the uncontended path costs one round trip. After a lost
   * reply, a node carrying our prefix is adopted. The protected create checks the listing against
   * what was seen before it (the servers' history must not have gone back).
   */
  private async enqueue(session: ZkSessionApi): Promise<ChildList> {
    const { parent, driver } = this;
    const mode = driver.createMode ?? 'EPHEMERAL_SEQUENTIAL';
    const node = { parent, name: this.ownPrefix ?? this.prefixNow(), data: this.data, mode, parents: driver.parents, readBack: 'children' } as const;
    const created = await this.host.creator.create(session, node, this, this.stop);
    // A queue entry has no marker nor guard: the create's only outcome is our node.
    return (created as { children: ChildList }).children;
  }

  /**
   * Waits until any of `paths` changes or is gone, or the connection drops (listing again after
   * reconnecting tells what happened). With `pokable`, a node whose data was already written when
   * the watch was set counts as changed. With `grantedByWrite`, a write to the node, before or after the
   * watch was set, is its holder's release to us: a grant. The stop signal and the session's end
   * interrupt the wait.
   */
  private watch(session: ZkSessionApi, paths: readonly string[], pokable: boolean, grantedByWrite: boolean): void {
    const round = (this.round < 0 ? -this.round : this.round) + 1; // never -0 (heap rules, above)
    this.round = round;
    this.grantedByWrite = grantedByWrite;
    this.ownPrefix = undefined; // our node's name holds it (prefixNow)
    this.host.track(session, this);
    if (mayAbort(this.stop)) this.stop.addEventListener('abort', this, { once: true });
    // Ending a wait cancels its watches, so the watch callback needs no round (a bound method, see
    // heap rules). The answers setting the watches are checked against the round.
    const changed = this.changed.bind(this);
    const onArmed = (stat: WatchedStat | null): void => {
      if (stat && grantedByWrite && stat.version > 0) this.wake(round, WRITE_GRANT);
      else if (!stat || (pokable && stat.version > 0)) this.wake(round, RELIST);
    };
    // A dropped connection: listing again after reconnecting tells what happened.
    const onFailed = (error: unknown): void => this.wake(round, error instanceof ZkConnectionLossError ? RELIST : error);
    for (const path of paths) {
      const watch = session.watchNode(path, changed);
      if (round !== this.round) {
        watch.cancel(); // woken already
        break;
      }
      if (paths.length === 1) this.watches = watch;
      else ((this.watches ??= []) as NodeWatch[]).push(watch);
      watch.armed.then(onArmed, onFailed);
    }
  }

  /** A watched node changed. */
  private changed(change: NodeChange): void {
    this.wake(this.round, change === 'changed' && this.grantedByWrite ? WRITE_GRANT : RELIST);
  }

  /** The stop signal aborted. */
  handleEvent(): void {
    this.wake(this.round, this.stop.reason);
  }

  /** The session ended. */
  interrupt(reason: unknown): void {
    this.wake(this.round, reason);
  }

  /** Ends the wait of `round` (if it still is the current one) and runs on from `resume`. */
  private wake(round: number, resume: unknown): void {
    if (round <= 0 || round !== this.round || !this.session) return;
    this.round = -round;
    const watches = this.watches;
    this.watches = undefined;
    if (Array.isArray(watches)) for (const watch of watches) watch.cancel();
    else watches?.cancel();
    if (mayAbort(this.stop)) this.stop.removeEventListener('abort', this);
    this.host.untrack(this.session, this);
    void this.run(resume);
  }
}

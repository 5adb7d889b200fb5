import {
  ZkConnectionLossError,
  ZkNoChildrenForEphemeralsError,
  ZkNoNodeError,
  ZkNodeExistsError,
  ZkRolledBackError,
  ZkSessionLostError,
} from '../zookeeper/zk-errors.js';
import { pathPrefixes } from '../zookeeper/paths.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ChildList, NodeChange, NodeWatch, WatchedStat, ZkSessionApi } from '../zookeeper/zk-session-api.js';
import type { LockDriver } from './lock-driver.js';
import { IncompatibleQueueError } from '../zookeeper/zk-errors.js';
import type { NodeRemover } from './node-remover.js';
import { ENTRY_KIND, nodePrefix, sortQueue, SEQUENCE_DIGITS } from './queue-entry.js';
import { queueToken } from './fencing-token.js';
import { readChildren, untilAnswered } from '../zookeeper/session-retry.js';
import { mayAbort } from './stopper.js';

/** Where the queue gets its session: ZkConnection, or a fake in unit tests. */
export interface SessionSource {
  session(signal?: AbortSignal): Promise<ZkSessionApi>;
}

/** A granted lock node. */
export interface QueueGrant {
  readonly session: ZkSessionApi;
  /** Full path of the lock node this grant owns. */
  readonly path: string;
  /**
   * Grows with every grant of the resource (see fencing-token.ts): for a queue, the parent's czxid and
   * the node's sequence number, which are known without reading the queue again.
   */
  readonly fencingToken: string;
  /**
   * Which incarnation of the queue granted it: the parent's czxid (a reaped and re-created parent
   * restarts its sequence numbers). Empty for the simple lock, which has no queue.
   */
  readonly queueId: string;
  /**
   * Release by writing the node and deleting it in one transaction: the write tells the entry after
   * it, if that entry watches it, that it now holds the lock (`Decision.handedOn`), which saves that
   * waiter a listing of the queue on the way to the grant. Set for exclusive and write entries that
   * are likely to have a successor (they waited, or saw entries after their own); an uncontended
   * lock is released with the delete alone.
   */
  readonly handOn?: boolean;
}

/** The held write a downgrade read is taken under. */
export interface UnderWrite {
  /** The read queues in this session only: when it ends, the acquire fails with ZkSessionLostError. */
  readonly session: ZkSessionApi;
  /**
   * The read's token. Its own sequence number would not do: the read is created after the writers
   * already waiting, who are nonetheless granted after it (a writer at the head waits for it).
   */
  readonly fencingToken: string;
}

/** Told once how an acquire ended. */
export interface QueueSink {
  /** The grant; null only for `tryOnly`. */
  granted(grant: QueueGrant | null): void;
  failed(error: unknown): void;
}

/**
 * The queue mechanics every lock type shares (Curator's LockInternals): enqueue one
 * EPHEMERAL_SEQUENTIAL node, list, ask the driver, watch whom it says, re-list when that changes,
 * and remove the node on every way out that is not a grant.
 */
export class LockQueue {
  private readonly rootAncestors: string[];
  /** The waiters of each session that are waiting for a watch, told when their session ends. */
  private readonly waiting = new Map<ZkSessionApi, Set<QueueWaiter>>();

  readonly remover: NodeRemover;
  /** The operator's epoch, the first part of every token (see fencing-token.ts). */
  readonly tokenEpoch: number;
  /** The ACL given to the paths this queue creates (rootPath and the lock parents); open when absent. */
  private readonly acl: readonly ZkAcl[] | undefined;

  constructor(
    readonly sessions: SessionSource,
    options: { rootPath: string; remover: NodeRemover; acl?: readonly ZkAcl[]; tokenEpoch: number },
  ) {
    this.rootAncestors = pathPrefixes(options.rootPath);
    this.remover = options.remover;
    this.acl = options.acl;
    this.tokenEpoch = options.tokenEpoch;
  }

  /**
   * Queues an entry in `parent` and waits for its turn, telling `sink` once how it ended. A session
   * lost while waiting only means the node died with it: the entry queues again in the next session
   * (a downgrade read, `under` a write, fails instead). `stop` ends the wait, its node removed (or the
   * removal scheduled when disconnected); `tryOnly` gives up at once (null) when the lock is taken.
   * A sink, not a promise: a waiting acquire is one QueueWaiter and the caller's promise, not a chain
   * of suspended async calls.
   */
  start(
    parent: string,
    driver: LockDriver,
    data: Buffer,
    stop: AbortSignal,
    tryOnly: boolean,
    under: UnderWrite | undefined,
    sink: QueueSink,
  ): void {
    void new QueueWaiter(this, parent, driver, data, stop, tryOnly, under?.session, under?.fencingToken, sink).run(FRESH);
  }

  /** Remembers a waiter until it stops waiting, to tell it when its session ends. */
  track(session: ZkSessionApi, waiter: QueueWaiter): void {
    let waiters = this.waiting.get(session);
    if (!waiters) {
      const created = new Set<QueueWaiter>();
      waiters = created;
      this.waiting.set(session, created);
      // One listener per session, for all its waiters.
      session.onLost(() => {
        if (this.waiting.get(session) === created) this.waiting.delete(session);
        for (const lost of [...created]) lost.interrupt(session.lost.reason);
        created.clear();
      });
    }
    waiters.add(waiter);
  }

  untrack(session: ZkSessionApi, waiter: QueueWaiter): void {
    this.waiting.get(session)?.delete(waiter);
  }

  /**
   * Creates our node and lists the queue, both sent at once: ZooKeeper answers one session's
   * requests in order, so the listing already contains our node and the uncontended path costs one
   * round trip. After a connection loss the create's outcome is unknown: the listing after
   * reconnecting tells (the waiter adopts any node carrying our prefix), so it is only created again
   * when none is there.
   */
  async enqueue(session: ZkSessionApi, waiter: QueueWaiter): Promise<ChildList> {
    const { parent, data, stop } = waiter;
    // Every node with our prefix is created after this, with a zxid above every zxid seen so far: a
    // listing that holds one shows a pzxid at least as high, unless the server's history went back.
    // Copied: the watermark updates its record of the queue in place as listings come.
    const seen = session.queueSeen(parent);
    const floor: Floor = { zxid: session.highestZxid, czxid: seen?.czxid ?? 0, cversion: seen?.cversion ?? 0 };
    for (;;) {
      if (!session.connected) await session.whenConnected(stop);
      waiter.createSent = true;
      const created = session.create(`${parent}/${waiter.prefix}`, data, 'EPHEMERAL_SEQUENTIAL', this.acl);
      const listed = session.getChildren(parent).then(
        (list) => ({ list }),
        (error: unknown) => ({ error }),
      );
      try {
        const path = await created;
        waiter.mine = path.slice(parent.length + 1);
      } catch (error) {
        await listed;
        if (error instanceof ZkNoNodeError) {
          waiter.createSent = false; // refused: nothing was created
          await this.ensureParent(session, parent, stop);
          continue;
        }
        if (error instanceof ZkNoChildrenForEphemeralsError) {
          waiter.createSent = false;
          throw new IncompatibleQueueError('it is held with the simple lock, which cannot share a resource with queue-based locks');
        }
        if (!(error instanceof ZkConnectionLossError)) throw error;
        const list = await readChildren(session, parent, stop);
        if (list.children.some((child) => child.startsWith(waiter.prefix))) return notRolledBack(list, floor, parent, waiter.prefix);
        continue;
      }
      const result = await listed;
      return notRolledBack('list' in result ? result.list : await readChildren(session, parent, stop), floor, parent, waiter.prefix);
    }
  }

  /**
   * Tells the entry after ours that we stopped waiting, by writing our own node: the write fires
   * the watch a later waiter may have set on it. Background work: our grant does not wait for it.
   */
  poke(session: ZkSessionApi, path: string, data: Buffer): void {
    untilAnswered(session, undefined, () => session.setData(path, data)).catch((error: unknown) => {
      if (!(error instanceof ZkNoNodeError || error instanceof ZkSessionLostError)) this.remover.report(error);
    });
  }

  /**
   * Creates the lock's parent (a container, reaped by ZooKeeper when empty), and rootPath (persistent)
   * only when that fails for want of it: a new name usually costs the one create.
   */
  private async ensureParent(session: ZkSessionApi, parent: string, stop: AbortSignal): Promise<void> {
    try {
      await createIfMissing(session, parent, 'CONTAINER', stop, this.acl);
      return;
    } catch (error) {
      if (!(error instanceof ZkNoNodeError)) throw error;
    }
    await this.ensureRoot(session, stop);
    await createIfMissing(session, parent, 'CONTAINER', stop, this.acl);
  }

  /** Creates rootPath and its ancestors where missing (persistent, with the configured ACL). */
  async ensureRoot(session: ZkSessionApi, stop: AbortSignal): Promise<void> {
    for (const path of this.rootAncestors) await createIfMissing(session, path, 'PERSISTENT', stop, this.acl);
  }
}

/**
 * Creates a node unless it exists, retrying through connection loss, with `acl` in the create
 * request (so it is never open, not even for an instant).
 */
export async function createIfMissing(
  session: ZkSessionApi,
  path: string,
  mode: 'PERSISTENT' | 'CONTAINER',
  stop: AbortSignal,
  acl?: readonly ZkAcl[],
): Promise<void> {
  await untilAnswered(session, stop, () =>
    session.create(path, '', mode, acl).catch((error: unknown) => {
      if (!(error instanceof ZkNodeExistsError)) throw error;
    }),
  );
}

/**
 * A listing that holds the node we just created, checked against what was seen before the create:
 * its pzxid is at least our node's zxid, and the parent's cversion went up, unless the servers'
 * history went back (see ZxidWatermark).
 */
/** What was seen before our create: the highest zxid, and the queue's parent as last listed (czxid 0: never). */
interface Floor {
  readonly zxid: number;
  readonly czxid: number;
  readonly cversion: number;
}

function notRolledBack(list: ChildList, floor: Floor, parent: string, prefix: string): ChildList {
  const { stat } = list;
  if (!list.children.some((child) => child.startsWith(prefix))) return list;
  if (stat.pzxid < floor.zxid) throw new ZkRolledBackError(parent, floor.zxid, stat.pzxid);
  // Our create counted up the parent's children's version since that listing, unless restored.
  if (floor.czxid !== 0 && floor.czxid === stat.czxid && stat.cversion <= floor.cversion) {
    throw new ZkRolledBackError(parent, floor.cversion, stat.cversion, 'sequence');
  }
  return list;
}

/** What one listing of the queue means for one attempt. */
type Step =
  | { kind: 'vanished'; extras: string[] }
  | { kind: 'granted'; extras: string[]; wakeNext: boolean; successors: boolean }
  | { kind: 'wait'; extras: string[]; watch: string[]; pokable: boolean; handedOn: boolean };

/**
 * Reads a listing for one attempt: our place (updating `attempt.mine` and `attempt.queueZxid`),
 * duplicates of ours to delete, and the driver's decision, as paths.
 */
function nextStep(
  list: ChildList,
  attempt: { readonly prefix: string; mine: string | undefined; queueZxid: number },
  driver: LockDriver,
  parent: string,
): Step {
  attempt.queueZxid = list.stat.czxid;
  const queue = sortQueue(list.children);
  const ours = queue.filter((entry) => entry.name.startsWith(attempt.prefix));
  if (ours.length === 0) {
    // Our node vanished while the session lives: deleted by hand, or its parent re-created.
    attempt.mine = undefined;
    return { kind: 'vanished', extras: [] };
  }
  // A create retried after a lost reply can leave two nodes of ours (the first one applied late on
  // another server): the lowest is our place, the others must go, or we wait on ourselves.
  attempt.mine = ours[0]!.name;
  const extras = ours.slice(1).map((extra) => `${parent}/${extra.name}`);
  const effective = ours.length > 1 ? queue.filter((entry) => !ours.includes(entry) || entry === ours[0]) : queue;
  const place = effective.indexOf(ours[0]!);
  const decision = driver.decide(effective, place);
  if (decision.granted) {
    return { kind: 'granted', extras, wakeNext: decision.wakeNext === true, successors: place + 1 < effective.length };
  }
  return {
    kind: 'wait',
    extras,
    watch: decision.watch.map((entry) => `${parent}/${entry.name}`),
    pokable: decision.pokable === true,
    handedOn: decision.handedOn === true,
  };
}

/** ZooKeeper's sequence suffix of a node name. */
/** The entries whose holders release by writing their node first (QueueGrant.handOn). */
const HAND_ON_KINDS = new Set<string>([ENTRY_KIND.exclusive, ENTRY_KIND.write]);
/** `run` starts with a session (a new attempt)... */
const FRESH = Symbol('fresh');
/** ...or after a watched node changed: list the queue again... */
const RELIST = Symbol('relist');
/** ...or the holder it watched released it to us (`Decision.handedOn`): a grant, without listing... */
const HANDED = Symbol('handed');
/** ...or goes on after an answer it was waiting for. A run that leaves the waiter watching ends with it. */
const WATCHING = Symbol('watching');

/**
 * One acquire in the queue: its place (the node of the current attempt, in the current session)
 * and, while it waits, its watches. Waiting costs this object and its watches only: no call stays
 * suspended. `run` goes from a session, or from a wake-up, to the next wait or to the end (a grant,
 * null, or an error, told to the sink); a watch, the stop signal or the session's end wakes it.
 *
 * The course is Curator's LockInternals: enqueue one EPHEMERAL_SEQUENTIAL node, list, ask the driver,
 * watch whom it says, list again when that changes, and remove the node on every way out that is not
 * a grant. A session lost while waiting only means the node died with it: the acquire queues again
 * in the next session, unless pinned to one session.
 */
class QueueWaiter {
  session: ZkSessionApi | undefined;
  /** The prefix while our node's name is unknown (then it is the name's start). */
  private ownPrefix: string | undefined;
  private node: string | undefined;
  /** A create was sent whose node may exist even though its name is unknown. */
  createSent = false;
  /** The czxid of the queue's parent, from the last listing: the first part of a grant's token. */
  queueZxid = 0;
  /** What it watches while waiting (one handle, or several for a semaphore's first waiter). */
  private watches: NodeWatch | NodeWatch[] | undefined;
  /**
   * Counts waits, so that a late answer about an earlier wait is ignored: positive while waiting
   * (the current wait's number), negated when it ends.
   */
  private round = 0;
  /** The current wait is on a holder whose release grants us the lock (`Decision.handedOn`). */
  private handedOn: boolean;

  constructor(
    private readonly queue: LockQueue,
    readonly parent: string,
    private readonly driver: LockDriver,
    readonly data: Buffer,
    readonly stop: AbortSignal,
    private readonly tryOnly: boolean,
    /** Queue in this session only (a downgrade read): its end fails the acquire. */
    private readonly pinned: ZkSessionApi | undefined,
    /** The token of the write a downgrade read is taken under, which the read carries. */
    private readonly inheritedToken: string | undefined,
    private readonly sink: QueueSink,
  ) {
    // Every field is set here, so that all of them fit in the object itself.
    this.session = undefined;
    this.ownPrefix = undefined;
    this.node = undefined;
    this.watches = undefined;
    this.handedOn = false;
  }

  /** `<kind>-<session id>-<nonce>-`: every node this attempt creates starts with it. */
  get prefix(): string {
    return this.ownPrefix ?? this.node!.slice(0, -SEQUENCE_DIGITS);
  }

  /** Our node's name, once known. */
  get mine(): string | undefined {
    return this.node;
  }

  set mine(name: string | undefined) {
    if (name !== undefined) this.ownPrefix = undefined; // the name starts with it: no need to keep both
    else if (this.node !== undefined) this.ownPrefix = this.prefix;
    this.node = name;
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
          session = this.pinned ?? (await this.queue.sessions.session(this.stop));
        } catch (error) {
          this.sink.failed(error);
          return;
        }
        this.session = session;
        this.node = undefined;
        this.ownPrefix = nodePrefix(this.driver.kind, session.id, this.driver.permits);
        this.createSent = false;
        resume = FRESH;
      }
      let outcome: QueueGrant | null | typeof WATCHING;
      try {
        // A wait ended by the stop signal or the session's end: the clean-up below starts at once,
        // so the delete is sent before whoever aborted hears of it.
        if (resume === HANDED) outcome = this.grant(session, true);
        else if (resume !== FRESH && resume !== RELIST) throw resume;
        else outcome = await this.step(session, resume);
      } catch (error) {
        if (!session.lost.aborted) await this.giveBack(session);
        if (this.stop.aborted) return this.sink.failed(this.stop.reason); // whatever else went wrong, the caller stopped first
        if (error instanceof ZkSessionLostError && !this.pinned) {
          this.session = undefined; // our node died with the session: queue again
          continue;
        }
        return this.sink.failed(error);
      }
      if (outcome === WATCHING) return;
      const grant = outcome;
      if (grant?.session.lost.aborted) {
        if (this.pinned) return this.sink.failed(this.pinned.lost.reason);
        this.session = undefined; // granted, then the session ended: the node is gone
        continue;
      }
      if (grant && this.stop.aborted) {
        // Granted in the same instant the caller gave up: hand the lock straight back.
        this.queue.remover.removeSoon(session, grant.path);
        return this.sink.failed(this.stop.reason);
      }
      // A grant that came after the session's lease ran out (a hand-on read late) cannot be trusted:
      // the session is ended now, its node with it, and the acquire queues again.
      if (grant && !session.checkLease()) {
        if (this.pinned) return this.sink.failed(session.lost.reason);
        this.session = undefined;
        continue;
      }
      return this.sink.granted(grant);
    }
  }

  /**
   * The grant of our node, as it stands. `handOn` (see QueueGrant): when we waited, or saw entries
   * after ours, someone likely waits on us.
   */
  private grant(session: ZkSessionApi, handOn: boolean): QueueGrant {
    const mine = this.mine!;
    return {
      session,
      path: `${this.parent}/${mine}`,
      fencingToken: this.inheritedToken ?? queueToken(this.queue.tokenEpoch, this.queueZxid, mine),
      queueId: String(this.queueZxid),
      handOn: handOn && HAND_ON_KINDS.has(this.driver.kind),
    };
  }

  /** One attempt in one session, from `resume` to a grant, null (tryOnly), or a wait (WATCHING). */
  private async step(session: ZkSessionApi, resume: typeof FRESH | typeof RELIST): Promise<QueueGrant | null | typeof WATCHING> {
    const { parent, queue } = this;
    let list: ChildList | undefined =
      resume === FRESH ? await queue.enqueue(session, this) : await readChildren(session, parent, this.stop);
    for (;;) {
      const step = nextStep(list, this, this.driver, parent);
      list = undefined;
      for (const extra of step.extras) queue.remover.removeSoon(session, extra);
      if (step.kind === 'vanished') {
        list = await queue.enqueue(session, this);
        continue;
      }
      const path = `${parent}/${this.mine}`;
      if (step.kind === 'granted') {
        if (step.wakeNext) queue.poke(session, path, this.data);
        return this.grant(session, resume === RELIST || step.successors);
      }
      if (this.tryOnly) {
        this.mine = undefined;
        this.createSent = false;
        await queue.remover.remove(session, path);
        return null;
      }
      if (!session.connected) await session.whenConnected(this.stop);
      this.stop.throwIfAborted();
      if (session.lost.aborted) throw session.lost.reason;
      this.watch(session, step.watch, step.pokable, step.handedOn);
      return WATCHING;
    }
  }

  /**
   * Waits until any of `paths` changes or is gone, or the connection drops (listing again after
   * reconnecting tells what happened). With `pokable`, a node whose data was already written when
   * the watch was set counts as changed. With `handedOn`, a write to the node, before or after the
   * watch was set, is its holder's release to us: a grant. The stop signal and the session's end
   * interrupt the wait.
   */
  private watch(session: ZkSessionApi, paths: readonly string[], pokable: boolean, handedOn: boolean): void {
    const round = (this.round < 0 ? -this.round : this.round) + 1; // never -0: the field stays a small integer
    this.round = round;
    this.handedOn = handedOn;
    this.queue.track(session, this);
    if (mayAbort(this.stop)) this.stop.addEventListener('abort', this, { once: true });
    // Ending a wait cancels its watches, so the watch callback needs no round: a bound method is
    // smaller than a closure. The answers setting the watches are checked against the round.
    const changed = this.changed.bind(this);
    const onArmed = (stat: WatchedStat | null): void => {
      if (stat && handedOn && stat.version > 0) this.wake(round, HANDED);
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
    this.wake(this.round, change === 'changed' && this.handedOn ? HANDED : RELIST);
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
    this.queue.untrack(this.session, this);
    void this.run(resume);
  }

  /**
   * An attempt failed while its session lives: deletes our node, waiting for one try while connected
   * (so that a timed-out acquire has cleaned up when it rejects), or the nodes a create of unknown
   * outcome may have made.
   */
  private async giveBack(session: ZkSessionApi): Promise<void> {
    const { remover } = this.queue;
    try {
      if (this.mine !== undefined) await remover.removeBounded(session, `${this.parent}/${this.mine}`);
      else if (this.createSent) remover.removeByPrefixSoon(session, this.parent, this.prefix);
    } catch (error) {
      remover.report(error);
    }
  }
}

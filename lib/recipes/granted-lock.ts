import { InvalidOptionsError, type LockLossReason, LockLostError, LockNotHeldError, LockReleaseRequestedError } from '../errors.js';
import { ReleaseWatch } from './release-watch.js';
import type { LockHandle } from './lock-handle.js';
import { ZkNoNodeError, ZkSessionLostError } from '../zookeeper/zk-errors.js';
import { untilAnswered } from '../zookeeper/session-lifecycle.js';
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';
import { formatToken, type GrantToken } from '../queue/fencing-token.js';
import type { QueueGrant } from '../queue/queue.types.js';

/** What a holder handing its lock on writes into its node, in the transaction that deletes it. */
const RELEASED = Buffer.alloc(0);

/**
 * Deletes a held lock's node: 'released' once confirmed (or found gone: a retried delete whose first
 * attempt was applied), 'session-lost' when the session ended first: then ZooKeeper deleted the
 * node, possibly long ago, and the holder was no longer the holder.
 *
 * With `grantByWrite`, the node is written and deleted in one transaction (QueueGrant.grantByWrite): one
 * request, applied whole or not at all. Its write fires the data watch of the entry watching the
 * node, which takes it as its grant; the delete then finds that one-shot watch gone, so the waiter
 * hears one event, not two. A refusal for another reason applied nothing: it is thrown, and the
 * node stays until the session ends.
 */
export async function removeHeldNode(session: ZkSessionApi, path: string, grantByWrite: boolean): Promise<'released' | 'session-lost'> {
  try {
    // Bound, not a closure: the request itself is all that is sent again after a dropped connection.
    await untilAnswered(
      session,
      undefined,
      grantByWrite
        ? session.multi.bind(session, [
            { op: 'setData', path, data: RELEASED },
            { op: 'delete', path },
          ])
        : session.delete.bind(session, path),
    );
    return 'released';
  } catch (error) {
    if (error instanceof ZkNoNodeError) return 'released';
    if (error instanceof ZkSessionLostError) return 'session-lost';
    throw error;
  }
}

/**
 * Where a held lock's release goes when the lock does not delete its node itself (removeHeldNode):
 * a Cohort, which may pass it to the next caller of the same process (a local handoff).
 */
export interface NodeReleaser {
  /**
   * 'released' once given back (deleted, or passed to the next caller of this process); 'session-lost' when the session had ended first (the lock was lost).
   * `grantByWrite` (QueueGrant.grantByWrite) is the lock's own choice for its delete; a releaser that
   * passes the node on locally may ignore it.
   */
  removeHeld(session: ZkSessionApi, path: string, grantByWrite: boolean): Promise<'released' | 'session-lost'>;
  /**
   * From now on, this holder's release must delete the node (no local handoff, no grant by write):
   * a read was taken under it, and stands behind its node (the node is pinned).
   */
  pinNode?(): void;
}

type State = 'held' | 'releasing' | 'released' | 'lost';

/** A holder's release requests: the `releaseRequested` signal and, when revocable, the watch on its node. */
interface ReleaseRequests {
  readonly controller: AbortController;
  watch: ReleaseWatch | undefined;
  mode: 'notify' | 'release';
}

/** A granted lock node: signals its loss, releases it exactly once. */
export class GrantedLock implements LockHandle {
  /**
   * The grant's token: its parts until first read (`fencingToken`), then the token, kept.
   *
   * Heap rule: nothing on the path of a lock nobody asks the token of reads `fencingToken`. The
   * formatted token (four padded pieces joined) is about 270 bytes that a held lock keeps; its parts
   * about 60 (`npm run bench -- --only heap`, "held locks": 1,183 bytes a LockService lock before
   * the token was formatted when read, 932 after).
   */
  private token: GrantToken;
  private state: State = 'held';
  /**
   * Taken away (`stopHolder`: at shutdown, at a release request with `'release'`, a leader giving
   * up): the signal aborted, though the node may still be there.
   *
   * Heap rule: `isHeld` and `assertHeld` read this flag, never `this.signal.aborted`: reading
   * `signal` makes the AbortController build its AbortSignal, about 600 bytes per held lock that
   * nobody listens to (`npm run bench -- --only heap`, "held locks"). Check: no `this.signal` or
   * `lostController.signal` between the grant and the release (a release may read it: the lock is going).
   */
  private takenAway = false;
  /** The node is pinned (`pinNode`): a read was taken under this lock; its release must not grant by write. */
  private pinned = false;
  private readonly lostController = new AbortController();
  private readonly forgetSession: () => void;
  /** Release requests: built when `releaseRequested` is first read or the lock is made revocable (a lock nobody revokes stays small). */
  private requests: ReleaseRequests | undefined = undefined;

  constructor(
    readonly resource: string,
    private readonly grant: QueueGrant,
    /** The Cohort this holder is one of (it may pass the node on); undefined: the node is this lock's own. */
    private readonly releaser: NodeReleaser | undefined,
    /** Told once when the handle stops being held (released or lost). */
    private readonly onEnd: (lock: GrantedLock) => void = () => undefined,
  ) {
    this.token = grant.token;
    // Released exactly once: on a confirmed release or on the loss, whichever ends the hold.
    grant.session.lease.retain();
    this.forgetSession = grant.session.onLost(() => this.lose());
  }

  /** The fencing token, formatted on first read (most holders never read it) from the parts fixed at the grant. */
  get fencingToken(): string {
    const token = this.token;
    return typeof token === 'string' ? token : (this.token = formatToken(token));
  }

  /**
   * Until when, on `performance.now()`'s clock, ZooKeeper cannot have given this lock to anyone
   * else; -Infinity once released, lost or taken away. The session's lease (see SessionLease).
   */
  get validUntil(): number {
    return this.state === 'held' && !this.takenAway ? this.grant.session.lease.validUntil : Number.NEGATIVE_INFINITY;
  }

  get signal(): AbortSignal {
    return this.lostController.signal;
  }

  get releaseRequested(): AbortSignal {
    this.requests ??= { controller: new AbortController(), watch: undefined, mode: 'notify' };
    return this.requests.controller.signal;
  }

  /**
   * Makes this holder revocable: it listens for a release request written into its node (`'notify'`:
   * `releaseRequested` aborts; `'release'`: the lock is taken away at once, `signal` aborting with
   * LockLostError reason `taken-away`), and for its node deleted by a forced release (the lock is lost, reason `deleted`).
   */
  watchForRelease(onRequest: 'notify' | 'release'): void {
    if (this.state !== 'held' || this.requests?.watch) return;
    const requests = (this.requests ??= { controller: new AbortController(), watch: undefined, mode: onRequest });
    requests.mode = onRequest;
    requests.watch = new ReleaseWatch(this.grant.session, this.grant.path, {
      requested: () => {
        if (this.state !== 'held') return;
        requests.controller.abort(new LockReleaseRequestedError(this.resource));
        if (onRequest === 'release') {
          void this.takeAway('another service asked for it (a release request), and it was taken with onReleaseRequest: \'release\'').catch(
            () => undefined,
          );
        }
      },
      deleted: () => {
        if (this.state !== 'held') return;
        this.lose(this.lossError('its node was deleted by someone else (a forced release request)', 'deleted'));
      },
    });
  }

  /** How this holder hears a release request (`watchForRelease`), or undefined: it does not. */
  get releaseMode(): 'notify' | 'release' | undefined {
    return this.requests?.watch ? this.requests.mode : undefined;
  }

  /** The session the lock node lives in (a downgrade read must be taken in the same one). */
  get session(): ZkSessionApi {
    return this.grant.session;
  }

  /** Which incarnation of the resource's queue granted it (its parent's czxid; '' for the simple lock). */
  get queueId(): string {
    return this.grant.queueId;
  }

  /** The lock node's full path. */
  get path(): string {
    return this.grant.path;
  }

  /**
   * The node must be deleted when this holder releases it, not passed to another caller of this
   * process in a local handoff (a downgraded read now stands behind it in the queue).
   */
  pinNode(): void {
    this.pinned = true;
    this.releaser?.pinNode?.();
  }

  /** Its end (released or lost) was told to `onEnd`; a lock taken away ends when its release does. */
  get hasEnded(): boolean {
    return this.state === 'released' || this.state === 'lost';
  }

  isHeld(): boolean {
    if (this.state !== 'held' || this.takenAway) return false;
    const now = performance.now();
    return now < this.grant.session.lease.untilAt(now);
  }

  assertHeld(forMs = 0): void {
    const { lease } = this.grant.session;
    const now = performance.now();
    const validUntil = lease.untilAt(now);
    if (this.state === 'held' && !this.takenAway && now + forMs < validUntil) return;
    if (this.signal.aborted) throw this.signal.reason as LockLostError;
    if (this.state !== 'held') throw new LockNotHeldError(this.resource);
    if (forMs >= lease.lengthMs) {
      throw new InvalidOptionsError(
        'forMs',
        `asks assertHeld for ${Math.round(forMs)} ms, but this session's lease is ${Math.round(lease.lengthMs)} ms long ` +
          '(the session timeout the server granted, less leaseMarginMs), so it never has that much left: ask for ' +
          'what the protected write needs, well under the lease, or raise sessionTimeoutMs (a server caps it at 20 ticks)',
      );
    }
    throw this.lossError(
      now < validUntil
        ? `its lease has ${Math.round(validUntil - now)} ms left, less than the ${Math.round(forMs)} ms asked for (each answer from ZooKeeper renews it to ${Math.round(lease.lengthMs)} ms, and it is renewed before half of it is gone: ask for less than half)`
        : 'its lease ran out (no answer from ZooKeeper for a while)',
      'lease-expired',
    );
  }

  async release(): Promise<void> {
    if (this.state !== 'held' && this.signal.aborted) {
      throw this.lostController.signal.reason as LockLostError; // lost, or taken away at shutdown
    }
    if (this.state !== 'held') throw new LockNotHeldError(this.resource);
    this.state = 'releasing';
    this.requests?.watch?.stop(); // our own delete is no forced release
    // Not granted by write when a downgraded read stands behind the node: the entry after it must list the
    // queue, and see the read.
    const grantByWrite = this.grant.grantByWrite === true && !this.pinned;
    let outcome: 'released' | 'session-lost';
    try {
      const { session, path } = this.grant;
      outcome = await (this.releaser ? this.releaser.removeHeld(session, path, grantByWrite) : removeHeldNode(session, path, grantByWrite));
    } catch (error) {
      this.state = 'held'; // the node is still there: the caller may retry
      if (this.requests?.watch) {
        this.requests.watch = undefined;
        this.watchForRelease(this.requests.mode);
      }
      throw error;
    }
    if (outcome === 'session-lost') {
      // The session ended before the delete got through (a holder paused past its session timeout
      // learns it here): the lock was lost, not released, and the caller must hear so.
      this.state = 'held';
      this.lose();
      throw this.lostController.signal.reason as LockLostError;
    }
    // Local state is cleared only now: the delete is confirmed.
    this.state = 'released';
    this.forgetSession();
    this.grant.session.lease.release();
    this.onEnd(this);
  }

  /**
   * Takes the lock away from a holder that is still running (at shutdown, or at a release request it
   * was told to obey): its signal aborts with a LockLostError (reason `taken-away`) saying why, then
   * the node is released. Not the CLI's `revoke`, which only asks (release-request.ts).
   */
  async takeAway(detail: string): Promise<void> {
    if (this.state !== 'held') return;
    this.stopHolder(this.lossError(detail, 'taken-away'));
    await this.release();
  }

  /** A take-away's first step: `signal` aborts with `reason`, the lock no longer held; the node stays until `release`. */
  protected stopHolder(reason: LockLostError): void {
    this.takenAway = true;
    this.lostController.abort(reason);
  }

  /** The error a loss is told with (`signal`'s reason, what `assertHeld` throws); a LeaderTerm words it as leadership. */
  protected lossError(detail: string, reason: LockLossReason): LockLostError {
    return new LockLostError(this.resource, this.fencingToken, detail, reason);
  }

  /** Ends the hold without a release: the session ended (the default reason), or the node was deleted by someone else. */
  private lose(reason?: LockLostError): void {
    if (this.state !== 'held') return; // a release in flight ends with the session too
    this.state = 'lost';
    this.requests?.watch?.stop();
    if (!this.lostController.signal.aborted) {
      const cause = this.grant.session.lost.reason as ZkSessionLostError | undefined;
      const detail = cause?.detail ?? 'the ZooKeeper session ended';
      this.lostController.abort(reason ?? this.lossError(detail, cause?.end ?? 'session-ended'));
    }
    if (reason) this.forgetSession(); // (the session's own end calls this from its listener)
    this.grant.session.lease.release();
    this.onEnd(this);
  }
}

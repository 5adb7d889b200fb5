import type { Lease } from './zk-session-api.js';

/**
 * A session's lease: until when this process may act as the holder of the session's locks.
 *
 * ZooKeeper expires a session no earlier than its timeout T after it last heard from it, and the
 * answer to a request sent at time t proves the server heard from the session after t. So the
 * session's locks are safe until `t + T - margin`, for the send time t of the latest answered
 * request, on this process's monotonic clock (`performance.now()`). The margin covers what that
 * proof leaves out on an ensemble: a follower passes a session's activity on to the leader, which
 * expires sessions, only at its next ping (every half tick), and a follower cut off from the leader
 * goes on answering its clients for up to syncLimit ticks before it gives up.
 *
 * The C client's own pings count too (`pingAnsweredAt`): a ping the server answered proves the same
 * as any other answer, from its send time. The C client pings after a third of the session timeout
 * with nothing sent, so they keep the lease by themselves only when it is longer than two thirds of
 * the timeout (leaseMarginMs under a third, less the round trip).
 *
 * While the session is in use (a lock held or waited for), the lease renews itself with a read
 * whenever no other answer came for a quarter of its length, so that an outage (a leader election)
 * finds at least three quarters of it left; a lease the pings keep (above) waits half its length, as
 * they come sooner. A renewal lost with the connection is sent again as soon as the session is
 * connected again: otherwise an idle holder would hear nothing until its lease ran out, however soon
 * a member served it again. When it runs out, its owner is told, and ends the session: every holder
 * hears of its loss before the server can have expired the session and granted its locks to someone
 * else. How often it renews changes nothing of that: the lease always runs from the send time of an
 * answered request.
 */
export class SessionLease implements Lease {
  /** Send time of the latest answered request; -Infinity before the first answer. */
  private lastContact = Number.NEGATIVE_INFINITY;
  private users = 0;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private ended = false;
  /** A renewal read failed (the connection dropped): send another once connected again. */
  private probeFailed = false;
  /** Renewal reads sent since the session began (for tests and the fault report). */
  probes = 0;
  /** After how long without an answer a session in use sends a renewal read, ms. */
  readonly renewAfterMs: number;

  constructor(
    /** How long one answer keeps the lease, in ms: the session timeout less the margin. */
    readonly lengthMs: number,
    /** Sends a cheap read; settles when it was answered or failed (the answer itself renews). */
    private readonly probe: () => Promise<unknown>,
    /** The lease ran out while in use; `silentMs` is how long since the last answered request was sent. */
    private readonly onExpired: (silentMs: number) => void,
    /**
     * The send time (`performance.now()`, never later than the true one) of the latest ping the
     * server answered, or undefined when none was on the current connection.
     */
    private readonly pingAnsweredAt: () => number | undefined = () => undefined,
    /** The session timeout, ms: whether the C client's pings (every third of it) keep the lease. */
    timeoutMs = Number.POSITIVE_INFINITY,
  ) {
    this.renewAfterMs = lengthMs > (2 * timeoutMs) / 3 ? lengthMs / 2 : lengthMs / 4;
  }

  /**
   * The `performance.now()` time until which the session's locks are safe; -Infinity before the
   * first answer. Looks at the pings only once the answers alone have run out.
   */
  get validUntil(): number {
    return this.untilAt(performance.now());
  }

  /** Whether the lease still runs now. */
  isValid(now = performance.now()): boolean {
    return now < this.untilAt(now);
  }

  /** validUntil, as seen at `now`: the pings are looked at only once the answers alone have run out. */
  untilAt(now: number): number {
    const until = this.lastContact + this.lengthMs;
    if (this.ended || now < until) return until;
    this.heardPing();
    return this.lastContact + this.lengthMs;
  }

  /** Counts the latest answered ping as contact. */
  private heardPing(): void {
    const sentAt = this.pingAnsweredAt();
    if (sentAt !== undefined) this.answered(sentAt);
  }

  /** A request sent at `sentAt` (`performance.now()`) was answered by the server. */
  answered(sentAt: number): void {
    if (sentAt > this.lastContact) this.lastContact = sentAt;
  }

  /**
   * Marks the session in use until a matching `release()`: the lease renews itself meanwhile, and
   * running out ends the session. (A count, not a handle per user: holders come and go by the
   * thousand a second, and should cost no allocation here.)
   */
  retain(): void {
    this.users += 1;
    if (!this.timer) this.check();
  }

  release(): void {
    this.users -= 1;
  }

  /**
   * The session is connected again (after a connection loss). A renewal that was due, or failed
   * with the connection, goes now: no other request may come before the lease ends.
   */
  connected(): void {
    if (this.ended || this.users === 0 || this.probing) return;
    if (this.probeFailed || performance.now() >= this.lastContact + this.renewAfterMs) this.sendProbe();
  }

  /**
   * Whether the lease runs now. When it has run out, the owner is told at once (whether or not the
   * session is in use): something was about to act on it, and must not.
   */
  checkNow(): boolean {
    if (this.ended) return false;
    const now = performance.now();
    if (now < this.untilAt(now)) return true;
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.onExpired(now - this.lastContact);
    return false;
  }

  /** The session ended: no more renewals. */
  end(): void {
    this.ended = true;
    this.lastContact = Number.NEGATIVE_INFINITY; // nothing it answered counts any more
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Runs when the timer fires (and when first retained): expires, renews, or waits. The timer is
   * left to lapse while nothing uses the session, so that holders coming and going cost no timer.
   */
  private check(): void {
    this.timer = undefined;
    if (this.ended || this.users === 0) return;
    this.heardPing(); // a ping answered since the last look may make the read unneeded
    const now = performance.now();
    const until = this.lastContact + this.lengthMs;
    if (now >= until) {
      this.ended = true;
      this.onExpired(now - this.lastContact);
      return;
    }
    const renewAt = this.lastContact + this.renewAfterMs;
    if (now >= renewAt && !this.probing) this.sendProbe();
    const next = now < renewAt ? Math.min(renewAt, until) : until;
    this.timer = setTimeout(() => this.check(), Math.max(1, Math.ceil(next - now)));
  }

  private sendProbe(): void {
    this.probing = true;
    this.probeFailed = false;
    this.probes += 1;
    const before = this.lastContact;
    this.probe().then(
      () => this.probeDone(this.lastContact > before),
      () => this.probeDone(false, true),
    );
  }

  /**
   * A renewal read came back, or failed (with the connection: connected() sends it again). The timer
   * was set for the lease's end while it was out: on an answer, look again now, so that the next renewal is timed from this answer however
   * late it came (a read answered after an election would otherwise leave the next one until the
   * old lease's end).
   */
  private probeDone(renewed: boolean, failed = false): void {
    this.probing = false;
    this.probeFailed = failed;
    // A failed read waits for the reconnect (connected()); one that renewed nothing waits for the
    // timer: looking again now would send the next at once.
    if (!renewed || this.timer === undefined || this.ended) return;
    clearTimeout(this.timer);
    this.check();
  }
}

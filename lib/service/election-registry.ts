import { IncompatibleLockError, InvalidOptionsError, type LeadershipLostError, LockServiceClosedError } from '../errors.js';
import type { ElectionInfo } from '../events/lock-event-types.js';
import type { LockEvents } from '../events/lock-events.js';
import type { LockLayout } from '../queue/layouts.js';
import type { LeaderHandle } from '../recipes/leader-handle.js';
import type { RecipeRuntime } from '../recipes/recipe-runtime.js';
import { Candidacy } from '../recipes/candidacy.js';
import type { LeadershipChange } from '../recipes/candidacy.options.js';
import { asElection, type Election, type ElectOptions } from './election.js';
import { Backoff } from '../shared/backoff.js';

/**
 * The elections of one LockService: one per group path, so that `elect` with the same options
 * returns the same Election; a path that is an election here is refused as a lock at once. Left
 * at shutdown.
 */
export class ElectionRegistry {
  /** By group path. Read by LockAcquirer.check: while it is empty, no lock is looked up as an election. */
  readonly byPath = new Map<string, Election>();
  /** How long after a failure the election of a path is joined anew: REJOIN_AFTER_MS, doubling while it keeps failing. */
  private readonly rejoins = new Map<string, { backoff: Backoff; afterMs: number }>();
  /** Shutdown has begun: no election is joined any more. */
  private closed = false;

  constructor(
    private readonly runtime: RecipeRuntime,
    private readonly events: LockEvents,
    private readonly defaultLayout: LockLayout,
    private readonly stopGraceMs: number,
    private readonly log: { warn(message: string): void; error(message: string): void },
  ) {}

  /**
   * This service's Election of `group`: joined now, or the one joined before with the same options.
   * @throws InvalidOptionsError when the group was joined with other options.
   */
  elect(group: string, options: ElectOptions): Election {
    if (this.closed) throw new LockServiceClosedError(group);
    const path = this.runtime.pathFor(group, options.zkPath);
    const election = this.byPath.get(path);
    if (election && election.state !== 'closed' && !this.rejoinable(election)) {
      // What a caller leaves out (a decorator names no id) is whatever the group was joined with.
      const sameId = options.id === undefined || options.id === election.id;
      const sameLayout = options.layout === undefined || options.layout === election.layout;
      if (sameId && sameLayout && election.group === group) return election;
      const asked = [options.id === undefined ? '' : `id "${options.id}"`, options.layout === undefined ? '' : `layout '${options.layout}'`].filter(Boolean).join(' and ');
      throw new InvalidOptionsError(
        'group',
        `"${group}" (${path}) is already an election of this LockService, joined with id "${election.id}" in the '${election.layout}' layout, ` +
          `not ${asked || 'this group name'}: an instance takes part once per group. Leave out the id and layout (or repeat them); ` +
          'to give a group named by @Leader or @OnLeadership its own id, call elect(group, { id }) in a provider\'s onModuleInit, before the decorators join it at bootstrap',
      );
    }
    const layout = options.layout ?? this.defaultLayout;
    const onRetry = (error: unknown) => this.log.warn(`Election "${group}": queueing again in a moment after ${String(error)}`);
    const candidacy = new Candidacy(this.runtime, group, { id: options.id, layout, zkPath: options.zkPath, stopGraceMs: this.stopGraceMs, onRetry });
    candidacy.onChange((change) => this.report(candidacy, change));
    const joined = asElection(candidacy);
    // Queued (or leading) in its first term: whatever made the path fail before has passed, and a
    // later failure is joined anew after REJOIN_AFTER_MS again, not after a doubled wait (the one
    // place the rejoin's count starts over: every term that leads was decided first).
    void joined.decided.then(() => {
      if (joined.state !== 'failed') this.rejoins.delete(path);
    });
    this.byPath.set(path, joined);
    return joined;
  }

  /**
   * Refuses a lock on a path that is an election of this service (it would wait behind the
   * participants forever, or lead nobody).
   * @throws IncompatibleLockError
   */
  assertNotElection(resource: string, zkPath: string | undefined): void {
    const election = this.byPath.get(this.runtime.pathFor(resource, zkPath));
    if (election && election.state !== 'closed') {
      throw new IncompatibleLockError(
        resource,
        'it is an election group of this LockService, not a lock',
        'Use @Leader or heldLock(group) to act as its leader, or give the lock another name.',
      );
    }
  }

  /** Whether `group` is an election of this service (joined, not closed). */
  isElection(group: string): boolean {
    for (const election of this.byPath.values()) if (election.group === group && election.state !== 'closed') return true;
    return false;
  }

  /** The current term of `group` when this instance leads it. */
  leadership(group: string): LeaderHandle | undefined {
    for (const election of this.byPath.values()) {
      const current = election.group === group ? election.current : undefined;
      if (current) return current;
    }
    return undefined;
  }

  /** A change of a candidacy of this service: its events, and a log line when it failed. */
  private report(candidacy: Candidacy, { leader, fencingToken, waitMs, leadMs, error }: LeadershipChange): void {
    const { group, id } = candidacy;
    if (leader) this.events.elected(group, id, fencingToken!, waitMs ?? 0);
    else if (fencingToken !== undefined && error) this.events.termEnded(group, id, leadMs ?? 0, error as LeadershipLostError);
    if (candidacy.state !== 'failed') return;
    this.log.error(`Election "${group}" stopped: this instance no longer takes part. ${String(error)}`);
    const rejoin = this.rejoins.get(candidacy.path) ?? { backoff: new Backoff(REJOIN_AFTER_MS, MAX_REJOIN_AFTER_MS), afterMs: 0 };
    rejoin.afterMs = rejoin.backoff.next();
    this.rejoins.set(candidacy.path, rejoin);
  }

  /**
   * A failed election is joined anew by the next `elect` for its group (a `@Leader` call, say) once
   * a while has passed: the path may have been cleared of the lock that made it fail, and a call on
   * every tick must not make a node each time.
   */
  private rejoinable(election: Election): boolean {
    if (election.state !== 'failed') return false;
    const afterMs = this.rejoins.get(election.path)?.afterMs ?? REJOIN_AFTER_MS;
    return performance.now() - (election.failedAt ?? 0) >= afterMs;
  }

  info(): ElectionInfo[] {
    return [...this.byPath.values()].flatMap((election) => {
      const { state } = election;
      if (state === 'closed') return [];
      const current = election.current;
      return [{ group: election.group, id: election.id, state, ...(current ? { fencingToken: current.fencingToken } : {}) }];
    });
  }

  /**
   * Leaves every election, and joins none from now on: leaders give up (their work gets
   * stopGraceMs to stop), followers' nodes go.
   */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.byPath.values()].map((election) => election.close()));
  }
}

/** The first pause before a failed election is joined anew, in ms; it doubles while the path keeps failing. */
const REJOIN_AFTER_MS = 10_000;
const MAX_REJOIN_AFTER_MS = 300_000;

import { Observable, Subject } from 'rxjs';
import type { LeadershipLostError } from '../errors.js';
import type { LockEvents } from '../events/lock-events.js';
import type { LockLayout } from '../queue/layouts.js';
import { Candidacy, type CandidacyOptions } from '../recipes/candidacy.js';
import type { RecipeRuntime } from '../recipes/recipe-runtime.js';

/** Options of LockService.elect. */
export interface ElectOptions {
  /**
   * This participant's id, stored in its node: what `leader()` and `participants()` return (and
   * Curator's `getParticipants()`, kazoo's `contenders()`). Its node holds at most 1024 bytes, the
   * host name and pid included in this library's layout.
   * @default `<hostname>:<pid>`
   */
  id?: string;
  /**
   * Whose election recipe the nodes follow: this library's own, Curator's `LeaderLatch` or kazoo's
   * `Election`, to share a group with Java or Python services (give their path as `zkPath`).
   * @default the module's `layout`
   */
  layout?: LockLayout;
  /**
   * The election's exact ZooKeeper path, instead of `<rootPath>/<encoded group>`; outside rootPath.
   * @default undefined (`<rootPath>/<encoded group>`)
   */
  zkPath?: string;
}

/** A change of this instance's leadership, as `Election.changes$` emits it. */
export interface ElectionChange {
  /** Whether this instance leads now. */
  readonly leader: boolean;
  /** The token of the term that began, or that ended. */
  readonly fencingToken?: string;
}

/**
 * This instance's part in one election (LockService.elect): it joins at once, leads in turn, and
 * after each term queues again by itself (in a fresh session after a lost one) until `close()` or
 * shutdown. Read the state with `isLeader()`; wait for leadership with `leadership()`; follow it
 * with `changes$`. `await election.decided` (true when this instance leads) before the first
 * `isLeader()`: just after `elect`, nobody leads yet.
 */
export class Election extends Candidacy {
  private readonly subject = new Subject<ElectionChange>();

  /** @internal LockService.elect builds it. */
  constructor(runtime: RecipeRuntime, group: string, options: CandidacyOptions, events: LockEvents) {
    super(runtime, group, options);
    this.onChange((change) => {
      if (change.leader) {
        events.elected(group, this.id, change.fencingToken!, change.waitMs ?? 0);
      } else if (change.fencingToken !== undefined && change.error) {
        events.revoked(group, this.id, change.leadMs ?? 0, change.error as LeadershipLostError);
      }
      this.subject.next({ leader: change.leader, ...(change.fencingToken === undefined ? {} : { fencingToken: change.fencingToken }) });
      if (this.state === 'failed') this.subject.complete();
    });
  }

  /**
   * This instance's leadership: the current state at once to each subscriber, then every change
   * (`leader: false` as the term's `signal` aborts, before the next leader can start); completes
   * when the election is closed or has failed.
   */
  readonly changes$: Observable<ElectionChange> = new Observable<ElectionChange>((subscriber) => {
    const current = this.current;
    subscriber.next(current ? { leader: true, fencingToken: current.fencingToken } : { leader: false });
    if (this.state === 'closed' || this.state === 'failed') return subscriber.complete();
    const subscription = this.subject.subscribe(subscriber);
    return () => subscription.unsubscribe();
  });

  override async close(): Promise<void> {
    await super.close();
    this.subject.complete();
  }
}

import { Observable, type Subscriber } from 'rxjs';
import type { Candidacy } from '../recipes/candidacy.js';
import type { CandidacyOptions } from '../recipes/candidacy.options.js';

/** Options of LockService.elect: where the election lives, and this participant's id (as for `new Candidacy`). */
export type ElectOptions = Pick<CandidacyOptions, 'id' | 'layout' | 'zkPath'>;

/** A change of this instance's leadership, as `Election.changes$` emits it. */
export interface ElectionChange {
  /** Whether this instance leads now. */
  readonly leader: boolean;
  /** The token of the term that began, or that ended. */
  readonly fencingToken?: string;
}

/**
 * This instance's part in one election (LockService.elect): the `Candidacy` of the group, with
 * `changes$`. It joins at once, leads in turn, and after each term queues again by itself (in a
 * fresh session after a lost one) until `close()` or shutdown. Read the state with `isLeader()`;
 * wait for leadership with `leadership()`; follow it with `changes$`. `await election.decided`
 * (true when this instance leads) before the first `isLeader()`: just after `elect`, nobody leads yet.
 */
export interface Election extends Candidacy {
  /**
   * This instance's leadership: the current state at once to each subscriber, then every change
   * (`leader: false` as the term's `signal` aborts, before the next leader can start); completes
   * when the election is closed or has failed. A view of `onChange`.
   */
  readonly changes$: Observable<ElectionChange>;
}

/**
 * The candidacy as an Election: `changes$` is an Observable over its one feed, `onChange`. The
 * subscribers still open are kept in one set, completed together when the candidacy leaves; one
 * that unsubscribes is dropped from it at once (nothing of it is kept until the election ends).
 */
export function asElection(candidacy: Candidacy): Election {
  const open = new Set<Subscriber<ElectionChange>>();
  const completeAll = (): void => {
    for (const subscriber of [...open]) subscriber.complete();
  };
  void candidacy.left.then(completeAll, completeAll);
  const changes$ = new Observable<ElectionChange>((subscriber) => {
    const { current } = candidacy;
    subscriber.next(current ? { leader: true, fencingToken: current.fencingToken } : { leader: false });
    if (candidacy.state === 'closed' || candidacy.state === 'failed') return subscriber.complete();
    open.add(subscriber);
    const stop = candidacy.onChange(({ leader, fencingToken }) => {
      subscriber.next(fencingToken === undefined ? { leader } : { leader, fencingToken });
      if (candidacy.state === 'failed') subscriber.complete();
    });
    return () => {
      open.delete(subscriber);
      stop();
    };
  });
  return Object.assign(candidacy, { changes$ });
}

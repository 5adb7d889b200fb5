/**
 * Whether a grant may be handed to the caller: the one check every recipe makes before it does (the
 * queue's waiters, the simple lock, the lease pools). (That the servers' history did not go back
 * under the node just created is the protected create's check, on what it reads back.)
 *
 * A grant is handed over only while its session lives, the caller still wants it, and the session's
 * lease still runs: a grant read late (a granting write noticed after a long pause) cannot be
 * trusted once the lease has run out, as ZooKeeper may have expired the session meanwhile.
 */
import type { ZkSessionApi } from '../zookeeper/zk-session-api.js';

/**
 * `'trusted'`: hand it over. `'session-ended'`: the node died with its session, or the lease ran out
 * (the session is ended now, its node with it): acquire again in the next session. `'stopped'`: the
 * caller gave up in the same instant: give the node back.
 */
export type GrantCheck = 'trusted' | 'session-ended' | 'stopped';

/** Checks a grant found in `session` for a caller whose wait ends with `stop`. */
export function checkGrant(session: ZkSessionApi, stop: AbortSignal): GrantCheck {
  if (session.lost.aborted) return 'session-ended';
  if (stop.aborted) return 'stopped';
  if (!session.lease.checkNow()) return 'session-ended'; // ends the session when the lease has run out
  return 'trusted';
}

/**
 * Checks a recorded history of the fault suite: mutual exclusion (with read/write rules), fencing,
 * FIFO grants, and that every operation finished. Pure: histories in, violations and figures out,
 * so it is unit-tested on histories made by hand (it must catch what it claims to catch).
 */
import type { ClientEvent, FaultAction, FencedWrite, LockMode } from './history.js';

export interface Hold {
  readonly key: string;
  readonly client: string;
  readonly op: number;
  readonly resource: string;
  readonly mode: LockMode;
  readonly requested: number;
  readonly granted: number;
  /** When the hold ended: release asked, loss signalled, or the client killed. */
  readonly end: number;
  readonly token: string;
  readonly sequence: number;
  /** The queue incarnation (the parent's czxid): sequences restart when a reaped parent is re-created. */
  readonly queueId: string;
  readonly lost: number | undefined;
}

export interface CheckResult {
  readonly violations: string[];
  readonly figures: {
    acquisitions: number;
    timeouts: number;
    failures: number;
    unfinished: number;
    faults: number;
    /** Holds that overlapped a later one because their holder was paused past its session (or had it expired). */
    excusedOverlaps: number;
    /** For each of those: ms from SIGCONT (or the expiry) to the holder's lost signal. */
    lostSignalDelaysMs: number[];
    /** For each killed or paused-past-session holder: ms from the fault to the next grant of its resource. */
    takeoversMs: number[];
    writesAccepted: number;
    writesRefused: number;
    /** Write holds a cohort handed over within its process (their token's holder number is not 0). */
    localHandoffs: number;
  };
}

const isWrite = (mode: LockMode): boolean => mode !== 'read';

/** A pause (SIGSTOP .. SIGCONT) of one client. */
interface Pause {
  client: string;
  from: number;
  to: number;
}

export function checkHistory(events: readonly ClientEvent[], actions: readonly FaultAction[], writes: readonly FencedWrite[], runEnd: number): CheckResult {
  const violations: string[] = [];
  const pauses = pausesOf(actions);
  const kills = new Map(actions.filter((a) => a.action === 'kill-client').map((a) => [a.target!, a.t]));
  type MutableOp = { -readonly [K in keyof Hold]?: Hold[K] } & { done?: boolean; failed?: boolean; timedOut?: boolean };
  const ops = new Map<string, MutableOp>();
  for (const event of events) {
    const key = `${event.client}#${event.op}`;
    const op: MutableOp = ops.get(key) ?? { key, client: event.client, op: event.op };
    ops.set(key, op);
    switch (event.type) {
      case 'requested':
        Object.assign(op, { resource: event.resource, mode: event.mode, requested: event.t });
        break;
      case 'granted':
        Object.assign(op, { granted: event.t, token: event.token, sequence: event.sequence, queueId: event.queueId });
        break;
      case 'timed-out':
        op.timedOut = true;
        op.done = true;
        break;
      case 'failed':
        op.failed = true;
        op.done = true;
        break;
      case 'releasing':
        op.end = Math.min(op.end ?? Infinity, event.t);
        break;
      case 'released':
        op.done = true;
        break;
      case 'lost':
        op.lost = event.t;
        op.end = Math.min(op.end ?? Infinity, event.t);
        op.done = true;
        break;
    }
  }
  const holds: Hold[] = [];
  let unfinished = 0;
  for (const op of ops.values()) {
    const killedAt = kills.get(op.client!);
    if (op.granted !== undefined) {
      const end = op.end ?? killedAt ?? runEnd;
      holds.push({ ...(op as Hold), end, lost: op.lost });
      if (op.end === undefined && killedAt === undefined) {
        violations.push(`${op.key} on ${op.resource} was granted and never released or lost`);
      }
    }
    if (!op.done && killedAt === undefined && op.granted === undefined) unfinished += 1;
  }
  if (unfinished > 0) violations.push(`${unfinished} acquires never finished (neither granted, timed out nor failed)`);

  // Mutual exclusion: a write holds alone; overlaps are excused only for a holder paused past its
  // session that then saw its lost signal. That includes a waiter paused after ZooKeeper made it the
  // holder but before it read the answer: it hears of the grant only when it runs again (the
  // recorded grant comes after the pause, and after later holders'), then of the lost session.
  const excused = new Set<string>();
  const lostSignalDelaysMs: number[] = [];
  const grantedStale = (hold: Hold): Pause | undefined =>
    hold.lost === undefined ? undefined : pauses.find((p) => p.client === hold.client && p.from >= hold.requested && p.to <= hold.granted);
  const byResource = groupBy(holds, (h) => h.resource);
  for (const list of byResource.values()) {
    list.sort((a, b) => a.granted - b.granted);
    for (let i = 0; i < list.length; i++) {
      const earlier = list[i]!;
      for (let j = i + 1; j < list.length && list[j]!.granted < earlier.end; j++) {
        const later = list[j]!;
        if (!isWrite(earlier.mode) && !isWrite(later.mode)) continue; // readers share
        const pause = pauses.find((p) => p.client === earlier.client && p.from <= later.granted && p.to >= earlier.granted);
        if (pause && earlier.lost !== undefined) {
          if (!excused.has(earlier.key)) lostSignalDelaysMs.push(Math.max(0, earlier.lost - pause.to));
          excused.add(earlier.key);
          continue;
        }
        const stale = [earlier, later].find((hold) => grantedStale(hold));
        if (stale) {
          if (!excused.has(stale.key)) lostSignalDelaysMs.push(Math.max(0, stale.lost! - grantedStale(stale)!.to));
          excused.add(stale.key);
          continue;
        }
        violations.push(
          `${earlier.mode} ${earlier.key} (token ${earlier.token}) and ${later.mode} ${later.key} (token ${later.token}) held ${earlier.resource} at once`,
        );
      }
    }
  }

  // FIFO: with a write involved, the lower sequence is granted first (within one incarnation of the
  // resource's parent: sequences restart when it is reaped or deleted and then re-created).
  const recreations = actions.filter((a) => a.action === 'recreate-parent');
  for (const [resource, list] of byResource) {
    const cuts = recreations.filter((a) => a.target === resource).map((a) => a.t);
    // Only holds of one queue (one incarnation of the parent) are ordered by their sequences, so
    // pairs are compared within each queue: far fewer pairs in a long soak than all of a resource's.
    for (const queue of groupBy(list, (h) => h.queueId).values()) {
      checkQueueOrder(resource, queue, cuts);
    }
  }

  function checkQueueOrder(resource: string, list: readonly Hold[], cuts: readonly number[]): void {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [a, b] = [list[i]!, list[j]!];
        if (!isWrite(a.mode) && !isWrite(b.mode)) continue;
        if (grantedStale(a) || grantedStale(b)) continue; // its grant was read after a pause past its session
        const from = Math.min(a.requested, b.requested);
        if (cuts.some((t) => t >= from && t <= b.granted)) continue;
        if (b.sequence < a.sequence) {
          violations.push(`${resource}: ${b.key} (#${b.sequence}) was granted after ${a.key} (#${a.sequence}), against queue order`);
        }
      }
    }
  }

  // Fencing: no two write holds share a token; a store refusing tokens lower than the highest it saw
  // refuses only holders that had been paused past their session.
  const tokens = new Map<string, string>();
  for (const hold of holds) {
    if (!isWrite(hold.mode)) continue;
    const id = `${hold.resource}@${hold.token}`;
    const other = tokens.get(id);
    if (other) violations.push(`token ${hold.token} on ${hold.resource} was given to both ${other} and ${hold.key}`);
    tokens.set(id, hold.key);
  }
  const store = fencedStore(writes);
  for (const refused of store.refused) {
    const key = `${refused.client}#${refused.op}`;
    if (!excused.has(key)) violations.push(`the fenced store refused ${key}'s ${refused.mode} with stale token ${refused.token} on ${refused.resource}`);
  }

  // Takeover: from a holder's crash (kill) or pause to the next grant of the resource.
  const takeoversMs: number[] = [];
  for (const hold of holds) {
    const killedAt = kills.get(hold.client);
    const pause = pauses.find((p) => p.client === hold.client && p.from >= hold.granted && p.from < hold.end && excused.has(hold.key));
    const faultAt = killedAt !== undefined && killedAt >= hold.granted && killedAt <= hold.end ? killedAt : pause?.from;
    if (faultAt === undefined) continue;
    const next = byResource.get(hold.resource)!.find((h) => h.granted > faultAt && h.key !== hold.key);
    if (next) takeoversMs.push(next.granted - faultAt);
  }

  return {
    violations,
    figures: {
      acquisitions: holds.length,
      timeouts: [...ops.values()].filter((o) => o.timedOut).length,
      failures: [...ops.values()].filter((o) => o.failed).length,
      unfinished,
      faults: actions.filter((a) => a.action.startsWith('fault:')).length,
      excusedOverlaps: excused.size,
      lostSignalDelaysMs,
      takeoversMs,
      writesAccepted: store.accepted,
      writesRefused: store.refused.length,
      localHandoffs: holds.filter((h) => isWrite(h.mode) && h.token !== undefined && !h.token.endsWith('000000')).length,
    },
  };
}

/**
 * A store that keeps, per resource, the highest write token it has accepted, and refuses any write
 * with a lower token (and any read with a token lower than the last write's). Writes are applied in
 * the order they were sent (one machine clock), as a store reached over an ordered channel would.
 */
export function fencedStore(writes: readonly FencedWrite[]): { accepted: number; refused: FencedWrite[] } {
  const highest = new Map<string, bigint>();
  const refused: FencedWrite[] = [];
  let accepted = 0;
  for (const write of [...writes].sort((a, b) => a.t - b.t)) {
    const token = BigInt(write.token);
    const top = highest.get(write.resource) ?? -1n;
    if (token < top) {
      refused.push(write);
      continue;
    }
    accepted += 1;
    if (isWrite(write.mode)) highest.set(write.resource, token);
  }
  return { accepted, refused };
}

/**
 * The windows in which a client's session could end without it knowing: a SIGSTOP until its SIGCONT,
 * and the injector expiring its session on purpose (until the server confirmed it gone).
 */
function pausesOf(actions: readonly FaultAction[]): Pause[] {
  const pauses: Pause[] = [];
  const open = new Map<string, number>();
  for (const action of actions) {
    if (action.action === 'pause-client' || action.action === 'expire-session') open.set(action.target!, action.t);
    if ((action.action === 'resume-client' || action.action === 'expire-session-done') && open.has(action.target!)) {
      pauses.push({ client: action.target!, from: open.get(action.target!)!, to: action.t });
      open.delete(action.target!);
    }
  }
  return pauses;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

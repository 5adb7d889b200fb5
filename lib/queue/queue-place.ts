import type { ChildList } from '../zookeeper/zk-session-api.js';
import type { LockDriver } from './lock-driver.js';

/** What one listing of the queue means for one waiter: its node is gone, it holds, or it waits. */
export type Place =
  | { kind: 'vanished'; extras: string[] }
  | { kind: 'granted'; mine: string; extras: string[]; wakeNext: boolean; successors: boolean }
  | { kind: 'wait'; mine: string; extras: string[]; watch: string[]; pokable: boolean; grantedByWrite: boolean };

/**
 * Reads a listing for one waiter whose nodes start with `prefix`: its place (`mine`, its node's
 * name), duplicates of its node to delete (`extras`), and the driver's decision, as paths.
 */
export function placeIn(list: ChildList, prefix: string, driver: LockDriver, parent: string): Place {
  const queue = driver.order(list.children);
  const ours = queue.filter((entry) => entry.name.startsWith(prefix));
  // Our node vanished while the session lives: deleted by hand, or its parent re-created.
  if (ours.length === 0) return { kind: 'vanished', extras: [] };
  // A create retried after a lost reply can leave two nodes of ours (the first one applied late on
  // another server): the lowest is our place, the others must go, or we wait on ourselves.
  const mine = ours[0]!.name;
  const extras = ours.slice(1).map((extra) => `${parent}/${extra.name}`);
  const effective = ours.length > 1 ? queue.filter((entry) => !ours.includes(entry) || entry === ours[0]) : queue;
  const place = effective.indexOf(ours[0]!);
  const decision = driver.decide(effective, place);
  if (decision.granted) {
    return { kind: 'granted', mine, extras, wakeNext: decision.wakeNext === true, successors: place + 1 < effective.length };
  }
  return {
    kind: 'wait',
    mine,
    extras,
    watch: decision.watch.map((entry) => `${parent}/${entry.name}`),
    pokable: decision.pokable === true,
    grantedByWrite: decision.grantedByWrite === true,
  };
}

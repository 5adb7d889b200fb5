import type { ZkStat } from './native-client.js';

/** What a listing told of a queue's parent: which incarnation, and its children's version. */
export interface QueueSeen {
  readonly czxid: number;
  readonly cversion: number;
}

/** What a connection has seen of ZooKeeper's history, as readers use it: plain fields, no calls. */
export interface HistorySeen {
  /** The highest zxid seen in any answer (0: none, or not tracked). */
  readonly highest: number;
  /** The queue parents as last listed, by path (the latest remembered ones). */
  readonly queues: ReadonlyMap<string, QueueSeen>;
}

/** How many queue parents the watermark remembers (the oldest are forgotten first). */
const MAX_QUEUES = 10_000;

/**
 * What a connection has seen of ZooKeeper's history, across its sessions, to tell when it went
 * back. ZooKeeper's history only grows, so a node this client creates gets a zxid above every one it
 * saw before sending the create, and a queue's parent, for as long as it lives (the same czxid),
 * counts its children's creates and deletes up (cversion, which numbers the sequential nodes). A
 * listing right after our own create that shows a lower zxid, or the same parent with a cversion no
 * higher than seen before, or an older parent (a lower czxid) where a newer one was seen, means the
 * servers were restored: from an empty data directory (zxids start over) or from a backup (a new
 * epoch, so zxids go on growing, but the parent's sequence numbers, or the parent itself, go back).
 * Tokens would then go backwards (see checkListing in queue/protected-create.ts).
 */
export class ZxidWatermark implements HistorySeen {
  /** Written only by `see` (readers get the watermark as HistorySeen). */
  highest = 0;
  readonly queues = new Map<string, { czxid: number; cversion: number }>();

  /** An answer's Stat; with `listed`, the Stat of that parent's listing. */
  see(stat: ZkStat, listed?: string): void {
    const zxid = Math.max(stat.czxid, stat.mzxid, stat.pzxid);
    if (zxid > this.highest) this.highest = zxid;
    if (listed === undefined || stat.czxid === 0) return;
    const seen = this.queues.get(listed);
    if (seen) {
      // Updated in place: a listing per lock cycle should cost no allocation. Only forward: a newer
      // incarnation (higher czxid), or more children's changes in the same one; an older incarnation
      // is a rollback, which the record must go on showing to every later create.
      if (seen.czxid < stat.czxid || (seen.czxid === stat.czxid && seen.cversion < stat.cversion)) {
        seen.czxid = stat.czxid;
        seen.cversion = stat.cversion;
      }
      return;
    }
    if (this.queues.size >= MAX_QUEUES) this.queues.delete(this.queues.keys().next().value!); // the oldest
    this.queues.set(listed, { czxid: stat.czxid, cversion: stat.cversion });
  }
}

import type { ZkStat } from './native-client.js';

/**
 * The highest zxid a connection has seen in any answer, across its sessions. ZooKeeper's history
 * only grows, so a node this client creates gets a zxid above every one it saw before sending the
 * create. A listing right after our own create that shows a lower one means the server's history
 * went back: it was restored from an older snapshot or started with an empty data directory, and
 * tokens made from its zxids would go backwards (see LockQueue.enqueue).
 */
export class ZxidWatermark {
  private highestSeen = 0;

  get highest(): number {
    return this.highestSeen;
  }

  see(stat: ZkStat): void {
    const zxid = Math.max(stat.czxid, stat.mzxid, stat.pzxid);
    if (zxid > this.highestSeen) this.highestSeen = zxid;
  }
}

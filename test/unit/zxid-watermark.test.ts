import { describe, expect, it } from 'vitest';
import type { ZkStat } from '../../lib/zookeeper/native-client.js';
import { ZxidWatermark } from '../../lib/zookeeper/zxid-watermark.js';

function stat(czxid: number, cversion: number, pzxid = czxid + cversion): ZkStat {
  return { czxid, mzxid: czxid, pzxid, version: 0, cversion, numChildren: 0, dataLength: 0, ephemeralOwner: '0' };
}

describe('ZxidWatermark', () => {
  it('remembers the highest zxid of any answer', () => {
    const watermark = new ZxidWatermark();
    watermark.see(stat(10, 0, 40));
    watermark.see(stat(5, 0, 7));
    expect(watermark.highest).toBe(40);
  });

  it('a queue record moves forward only: more changes, or a newer parent', () => {
    const watermark = new ZxidWatermark();
    watermark.see(stat(100, 8), '/q');
    watermark.see(stat(100, 6), '/q'); // fewer changes of the same parent: a rollback, not recorded
    expect(watermark.queues.get('/q')).toEqual({ czxid: 100, cversion: 8 });
    watermark.see(stat(200, 1), '/q'); // the parent created again
    expect(watermark.queues.get('/q')).toEqual({ czxid: 200, cversion: 1 });
  });

  it('an older parent seen after a newer one does not replace it, so every later create is checked against the newer', () => {
    const watermark = new ZxidWatermark();
    watermark.see(stat(200, 3), '/q');
    watermark.see(stat(100, 9), '/q'); // restored from a backup taken before the re-creation
    expect(watermark.queues.get('/q')).toEqual({ czxid: 200, cversion: 3 });
  });
});

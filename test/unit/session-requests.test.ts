import { describe, expect, it } from 'vitest';
import type { NativeHandle, ZkStat } from '../../lib/zookeeper/native-handle.js';
import { SessionLease } from '../../lib/zookeeper/session-lease.js';
import { type Reply, SessionRequests } from '../../lib/zookeeper/session-requests.js';
import { ZkSessionLostError } from '../../lib/zookeeper/zk-errors.js';
import { ZxidWatermark } from '../../lib/zookeeper/zxid-watermark.js';

function stat(czxid: number, cversion: number, pzxid: number): ZkStat {
  return { czxid, mzxid: czxid, pzxid, version: 0, cversion, numChildren: 0, dataLength: 0, ephemeralOwner: '0' };
}

/** A session over a handle that keeps each request's reply for the test to answer. */
class TestSession extends SessionRequests {
  readonly replies: Reply[] = [];
  readonly lease = new SessionLease(60_000, () => Promise.resolve(), () => undefined, () => undefined);
  readonly watermark = new ZxidWatermark();
  protected handle = {
    a_get_children2: (_path: string, _watch: boolean, reply: Reply) => (this.replies.push(reply), 0),
    a_get: (_path: string, _watch: boolean, reply: Reply) => (this.replies.push(reply), 0),
  } as unknown as NativeHandle;
  protected ended(): void {}
  protected socketDropped(): void {}
  /** Fails what is in flight, as the session's end does. */
  failPending(): void {
    for (const request of [...this.pending]) request.fail(new ZkSessionLostError('session', '1', 'test', 'lease-expired'));
  }
}

describe('SessionRequests', () => {
  it('an answer that comes after its request failed still raises the watermark (the next session\'s history floor)', async () => {
    const session = new TestSession();
    const listing = session.getChildren('/q');
    const read = session.getData('/q/n');
    session.failPending(); // the lease ran out while both were in flight
    await expect(listing).rejects.toBeInstanceOf(ZkSessionLostError);
    await expect(read).rejects.toBeInstanceOf(ZkSessionLostError);
    session.replies[0]!(0, undefined, ['n'], stat(100, 8, 900)); // the late answers arrive
    session.replies[1]!(0, undefined, stat(50, 0, 950), Buffer.alloc(0));
    expect(session.watermark.highest).toBe(950);
    expect(session.watermark.queues.get('/q')).toEqual({ czxid: 100, cversion: 8 });
  });

  it('an answer in time raises it too, and resolves the caller', async () => {
    const session = new TestSession();
    const listing = session.getChildren('/q');
    session.replies[0]!(0, undefined, ['n'], stat(100, 2, 300));
    expect((await listing).children).toEqual(['n']);
    expect(session.watermark.highest).toBe(300);
  });
});

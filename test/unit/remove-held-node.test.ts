import { describe, expect, it } from 'vitest';
import { removeHeldNode } from '../../lib/recipes/granted-lock.js';
import { ZK_CODES, zkError, ZkNoAuthError, ZkSessionLostError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';

/**
 * How a release that grants by write ends (pure logic: a scripted session). The write and the delete are one
 * transaction, applied whole or not at all, so its outcome is the release's.
 */
describe('removeHeldNode (a held lock releasing its node) granting by write', () => {
  const PATH = '/locks/r/x-1-1-0000000001';

  function session(multi: () => Promise<void>) {
    const calls: unknown[] = [];
    const fake = {
      connected: true,
      whenConnected: () => Promise.resolve(),
      multi: (ops: unknown) => (calls.push(ops), multi()),
      delete: () => (calls.push('delete'), Promise.resolve()),
    };
    return { session: fake as unknown as ZkSessionApi, calls };
  }
  const noAuth = () => Promise.reject(zkError(ZK_CODES.NOAUTH, 'multi', PATH));
  const noNode = () => Promise.reject(zkError(ZK_CODES.NONODE, 'multi', PATH));
  const sessionLost = () => Promise.reject(new ZkSessionLostError('multi', PATH));
  const ok = () => Promise.resolve();

  it('writes and deletes the node in one transaction; without granting by write, deletes it alone', async () => {
    const { session: s, calls } = session(ok);
    expect(await removeHeldNode(s, PATH, true)).toBe('released');
    expect(calls).toEqual([[{ op: 'setData', path: PATH, data: Buffer.alloc(0) }, { op: 'delete', path: PATH }]]);
    const plain = session(ok);
    expect(await removeHeldNode(plain.session, PATH, false)).toBe('released');
    expect(plain.calls).toEqual(['delete']);
  });

  it('retries through a connection loss; a retry that finds the node gone counts as the release', async () => {
    let attempts = 0;
    const { session: s } = session(() => (++attempts === 1 ? Promise.reject(zkError(ZK_CODES.CONNECTIONLOSS, 'multi', PATH)) : noNode()));
    expect(await removeHeldNode(s, PATH, true)).toBe('released');
    expect(attempts).toBe(2);
  });

  it('a session that ended first is a lost lock; a refusal applied nothing and is thrown', async () => {
    expect(await removeHeldNode(session(sessionLost).session, PATH, true)).toBe('session-lost');
    await expect(removeHeldNode(session(noAuth).session, PATH, true)).rejects.toBeInstanceOf(ZkNoAuthError);
  });
});

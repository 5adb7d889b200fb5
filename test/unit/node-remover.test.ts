import { describe, expect, it } from 'vitest';
import { NodeRemover } from '../../lib/recipes/node-remover.js';
import { ZK_CODES, zkError, ZkNoAuthError, ZkSessionLostError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session.js';

/**
 * How a hand-on release ends when its delete fails (pure logic: a scripted session). The write that
 * precedes the delete may already have granted the lock to the next waiter, so once it was applied
 * the release must not be taken back.
 */
describe('NodeRemover.removeHeld with hand-on', () => {
  const PATH = '/locks/r/x-1-1-0000000001';

  function session(script: { setData: () => Promise<void>; delete: () => Promise<void>; version?: number }) {
    const calls: string[] = [];
    const fake = {
      connected: true,
      setData: () => (calls.push('setData'), script.setData()),
      delete: () => (calls.push('delete'), script.delete()),
      getData: () => (calls.push('getData'), Promise.resolve({ data: Buffer.alloc(0), stat: { version: script.version ?? 0 } })),
    };
    return { session: fake as unknown as ZkSessionApi, calls };
  }
  const noAuth = () => Promise.reject(zkError(ZK_CODES.NOAUTH, 'delete', PATH));
  const connectionLoss = () => Promise.reject(zkError(ZK_CODES.CONNECTIONLOSS, 'setData', PATH));
  const sessionLost = () => Promise.reject(new ZkSessionLostError('delete', PATH));
  const ok = () => Promise.resolve();

  it('writes, then deletes, sent together', async () => {
    const { session: s, calls } = session({ setData: ok, delete: ok });
    expect(await new NodeRemover().removeHeld(s, PATH, true)).toBe('deleted');
    expect(calls).toEqual(['setData', 'delete']);
  });

  it('counts a session lost after the write was applied as a release, not a loss', async () => {
    const { session: s } = session({ setData: ok, delete: sessionLost });
    expect(await new NodeRemover().removeHeld(s, PATH, true)).toBe('deleted');
    const plain = session({ setData: ok, delete: sessionLost });
    expect(await new NodeRemover().removeHeld(plain.session, PATH, false)).toBe('session-lost');
  });

  it('once the write was applied, a failing delete is reported and the release still counts as done', async () => {
    const reported: unknown[] = [];
    const { session: s } = session({ setData: ok, delete: noAuth });
    expect(await new NodeRemover((e) => reported.push(e)).removeHeld(s, PATH, true)).toBe('deleted');
    expect(reported).toHaveLength(1);
  });

  it('a write of unknown outcome is settled by reading the node: written, the release stands; not written, it fails', async () => {
    const written = session({ setData: connectionLoss, delete: noAuth, version: 1 });
    expect(await new NodeRemover(() => undefined).removeHeld(written.session, PATH, true)).toBe('deleted');
    expect(written.calls).toContain('getData');
    const notWritten = session({ setData: connectionLoss, delete: noAuth, version: 0 });
    await expect(new NodeRemover().removeHeld(notWritten.session, PATH, true)).rejects.toBeInstanceOf(ZkNoAuthError);
  });
});

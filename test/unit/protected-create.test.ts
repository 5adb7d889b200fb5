import { describe, expect, it } from 'vitest';
import { OWN_PARENTS } from '../../lib/queue/layouts.js';
import { LockParents } from '../../lib/queue/lock-parents.js';
import { NodeRemover } from '../../lib/queue/node-remover.js';
import { type CreateProgress, ProtectedCreate, type ProtectedNode } from '../../lib/queue/protected-create.js';
import { EMPTY_STAT } from '../../lib/zookeeper/session-retry.js';
import { HistoryWentBackError, QueueConflictError, ZK_CODES, zkError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';

/**
 * The protected create every recipe uses (pure logic: a scripted, in-memory session). What each
 * create does to the tree is scripted per call: applied, lost on the way back, refused.
 */
type Fate = 'ok' | 'lost-after' | 'lost-before' | 'no-node' | 'exists' | 'ephemeral-parent';

function scripted(fates: Fate[], tree = new Map<string, Buffer>([['/locks', Buffer.alloc(0)], ['/locks/r', Buffer.alloc(0)]])) {
  const calls: string[] = [];
  let sequence = 0;
  const childrenOf = (parent: string): string[] =>
    [...tree.keys()].filter((path) => path.startsWith(`${parent}/`) && !path.slice(parent.length + 1).includes('/')).map((path) => path.slice(parent.length + 1));
  const session = {
    id: 's1',
    connected: true,
    watermark: { highest: 0, queues: new Map() },
    lost: new AbortController().signal,
    whenConnected: () => Promise.resolve(),
    create: (path: string, data: Buffer | string, mode: string) => {
      calls.push(`create ${path}`);
      const parent = path.slice(0, path.lastIndexOf('/'));
      const fate = tree.has(parent) || mode === 'PERSISTENT' || mode === 'CONTAINER' ? (fates.shift() ?? 'ok') : 'no-node';
      if (fate === 'no-node') return Promise.reject(zkError(ZK_CODES.NONODE, 'create', path));
      if (fate === 'ephemeral-parent') return Promise.reject(zkError(ZK_CODES.NOCHILDRENFOREPHEMERALS, 'create', path));
      if (fate === 'exists' || (tree.has(path) && mode !== 'EPHEMERAL_SEQUENTIAL')) return Promise.reject(zkError(ZK_CODES.NODEEXISTS, 'create', path));
      if (fate === 'lost-before') return Promise.reject(zkError(ZK_CODES.CONNECTIONLOSS, 'create', path));
      const name = mode === 'EPHEMERAL_SEQUENTIAL' ? `${path}${String(++sequence).padStart(10, '0')}` : path;
      tree.set(name, Buffer.from(data));
      if (fate === 'lost-after') return Promise.reject(zkError(ZK_CODES.CONNECTIONLOSS, 'create', path));
      return Promise.resolve(name);
    },
    getChildren: (parent: string) => (calls.push(`list ${parent}`), Promise.resolve({ children: childrenOf(parent), stat: EMPTY_STAT })),
    getData: (path: string) => {
      calls.push(`read ${path}`);
      const data = tree.get(path);
      return data ? Promise.resolve({ data, stat: EMPTY_STAT }) : Promise.reject(zkError(ZK_CODES.NONODE, 'getData', path));
    },
    delete: (path: string) => (calls.push(`delete ${path}`), tree.delete(path), Promise.resolve()),
  };
  const creator = new ProtectedCreate(new LockParents('/locks', undefined), undefined, new NodeRemover());
  return { session: session as unknown as ZkSessionApi, creator, calls, tree, childrenOf };
}

const entry = (parent = '/locks/r'): ProtectedNode => ({
  parent,
  name: 'x-s1-1-',
  data: Buffer.from('me'),
  mode: 'EPHEMERAL_SEQUENTIAL',
  parents: OWN_PARENTS,
  readBack: 'children',
});
const fresh = (): CreateProgress => ({ createSent: false, mine: undefined });
const stop = new AbortController().signal;
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the protected create', () => {
  it('creates the node and reads the listing in the same round trip: the listing already holds it', async () => {
    const { session, creator, calls } = scripted(['ok']);
    const progress = fresh();
    const created = await creator.create(session, entry(), progress, stop);
    expect(created).toMatchObject({ outcome: 'created', path: '/locks/r/x-s1-1-0000000001', adopted: false });
    expect(created.outcome === 'created' && created.children?.children).toEqual(['x-s1-1-0000000001']);
    expect(progress.mine).toBe('x-s1-1-0000000001');
    expect(calls).toEqual(['create /locks/r/x-s1-1-', 'list /locks/r']);
  });

  it("refuses what it reads back when the servers' history went back under the create (a listing or a node older than what was seen)", async () => {
    const { session, creator } = scripted([]);
    await expect(creator.create(session, entry(), fresh(), stop)).resolves.toMatchObject({ outcome: 'created' }); // control: nothing seen yet
    (session.watermark as { highest: number }).highest = 7; // the session saw zxid 7; the fake's reads carry zxids of 0
    await expect(creator.create(session, entry(), fresh(), stop)).rejects.toBeInstanceOf(HistoryWentBackError);
    const node: ProtectedNode = { parent: '/locks', name: 'simple', data: Buffer.from('m1'), mode: 'EPHEMERAL', parents: OWN_PARENTS, marker: 'm1', readBack: 'node' };
    await expect(creator.create(session, node, fresh(), stop)).rejects.toBeInstanceOf(HistoryWentBackError);
  });

  it("refuses a node whose zxid only equals the highest seen: a create always makes a higher one (servers restored one transaction back)", async () => {
    const { session, creator } = scripted([]);
    const listing = session.getChildren.bind(session);
    const at = (pzxid: number) => (session.getChildren = ((parent: string) => listing(parent).then((list) => ({ ...list, stat: { ...EMPTY_STAT, pzxid } }))) as typeof session.getChildren);
    (session.watermark as { highest: number }).highest = 7;
    at(8);
    await expect(creator.create(session, entry(), fresh(), stop)).resolves.toMatchObject({ outcome: 'created' }); // control: above the floor
    at(7);
    await expect(creator.create(session, entry(), fresh(), stop)).rejects.toBeInstanceOf(HistoryWentBackError);
    await expect(creator.create(session, entry(), fresh(), stop)).rejects.toThrow(/seen zxid 0x7, and a node it created since \(or its parent's listing\) shows 0x7, not higher/);
  });

  it('adopts the node of a create whose reply was lost, found by its name, and does not create it twice', async () => {
    const { session, creator, calls, childrenOf } = scripted(['lost-after']);
    const progress = fresh();
    const created = await creator.create(session, entry(), progress, stop);
    expect(created).toMatchObject({ outcome: 'created', path: '/locks/r/x-s1-1-0000000001', adopted: true });
    expect(calls.filter((call) => call.startsWith('create'))).toHaveLength(1);
    expect(childrenOf('/locks/r')).toEqual(['x-s1-1-0000000001']);
    expect(progress).toEqual({ createSent: true, mine: undefined }); // the listing tells which is ours
  });

  it('sends the create again when the lost reply was of a create that never happened', async () => {
    const { session, creator, calls, childrenOf } = scripted(['lost-before', 'ok']);
    const created = await creator.create(session, entry(), fresh(), stop);
    expect(created).toMatchObject({ outcome: 'created', adopted: false });
    expect(calls.filter((call) => call.startsWith('create'))).toHaveLength(2);
    expect(childrenOf('/locks/r')).toHaveLength(1);
  });

  it('creates a missing parent (a container below rootPath), then the node', async () => {
    const { session, creator, calls } = scripted([], new Map([['/locks', Buffer.alloc(0)]]));
    const created = await creator.create(session, entry('/locks/new'), fresh(), stop);
    expect(created).toMatchObject({ outcome: 'created', path: '/locks/new/x-s1-1-0000000001' });
    expect(calls.filter((call) => call.startsWith('create'))).toEqual(['create /locks/new/x-s1-1-', 'create /locks/new', 'create /locks/new/x-s1-1-']);
  });

  it('refuses a parent that is a simple lock node with QueueConflictError, having created nothing', async () => {
    const { session, creator } = scripted(['ephemeral-parent']);
    const progress = fresh();
    await expect(creator.create(session, entry(), progress, stop)).rejects.toBeInstanceOf(QueueConflictError);
    expect(progress.createSent).toBe(false);
  });

  it("tells a shared name's holder from a lost reply of our own by the marker at the start of its data", async () => {
    const shared = (marker: string): ProtectedNode => ({
      parent: '/locks',
      name: 'r',
      data: Buffer.from(`${marker}data`),
      mode: 'EPHEMERAL',
      parents: OWN_PARENTS,
      marker,
      readBack: 'node',
    });
    const theirs = scripted([], new Map([['/locks', Buffer.alloc(0)], ['/locks/r', Buffer.from('s2-1\nx')]]));
    expect(await theirs.creator.create(theirs.session, shared('s1-1\n'), fresh(), stop)).toMatchObject({ outcome: 'taken' });
    const ours = scripted(['lost-after'], new Map([['/locks', Buffer.alloc(0)]]));
    expect(await ours.creator.create(ours.session, shared('s1-1\n'), fresh(), stop)).toMatchObject({ outcome: 'created', adopted: true });
  });

  it('gives back a node whose name it knows, or every node a create of unknown outcome may have made', async () => {
    const known = scripted(['ok']);
    const progress = fresh();
    await known.creator.create(known.session, entry(), progress, stop);
    await known.creator.abandon(known.session, entry(), progress);
    expect(known.childrenOf('/locks/r')).toEqual([]);
    const unknown = scripted([]);
    unknown.tree.set('/locks/r/x-s1-1-0000000009', Buffer.alloc(0)); // a retried create applied late
    const sent: CreateProgress = { createSent: true, mine: undefined };
    await unknown.creator.abandon(unknown.session, entry(), sent);
    await settle();
    expect(unknown.childrenOf('/locks/r')).toEqual([]);
  });
});

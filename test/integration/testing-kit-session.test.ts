/**
 * The in-memory ZooKeeper's sessions against a real server's, request by request: the same answers,
 * the same typed errors, zxids and sequence numbers that move the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { digestId, ZK_PERMS } from '../../lib/index.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import type { GrantedLock } from '../../lib/recipes/granted-lock.js';
import { InMemoryConnection, InMemoryZooKeeper } from '../../lib/testing/index.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import {
  ZkNoAuthError,
  ZkNoChildrenForEphemeralsError,
  ZkNodeExistsError,
  ZkNoNodeError,
  ZkNotEmptyError,
  ZkSessionLostError,
} from '../../lib/zookeeper/zk-errors.js';
import type { ZkConnectionLike } from '../../lib/zookeeper/zk-connection-like.js';
import { eventually, expireSession, STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

type Connect = (options?: { digest?: string }) => Promise<ZkConnectionLike>;

function realServer(): Connect {
  const zk = useZooKeeper();
  const open: ZkConnection[] = [];
  afterEach(() => {
    for (const connection of open.splice(0)) connection.close();
  });
  // Steady sessions: the one test that ends a session does it with expireSession.
  return async (options = {}) => {
    const connection = new ZkConnection({ connectionString: zk.connectString, ...STEADY_SESSION, ...options });
    open.push(connection);
    await connection.connect();
    return connection;
  };
}

function inMemory(): Connect {
  const zookeeper = new InMemoryZooKeeper();
  afterEach(() => zookeeper.close());
  return async (options = {}) => {
    const connection = zookeeper.connect(options);
    await connection.connect();
    return connection;
  };
}

describe.each([
  ['a real ZooKeeper server', realServer],
  ['the in-memory ZooKeeper', inMemory],
])('a session on %s', (_name, makeBackend) => {
  const connect = makeBackend();

  async function rooted(name: string) {
    const connection = await connect();
    const session = await connection.session();
    const root = uniqueRoot(name);
    await session.create(root, '', 'PERSISTENT');
    return { connection, session, root };
  }

  /** Ends the connection's session as its server would (the real one: from another client, with its credentials). */
  async function expire(connection: ZkConnectionLike): Promise<void> {
    if (connection instanceof ZkConnection) await expireSession(connection);
    else (connection as InMemoryConnection).expireSession();
  }

  it('keeps the live session in a field: none from its end (nor a lost one handed out), the next once open, where an acquire queues; none once closed', async () => {
    const connection = await connect();
    const first = connection.live!;
    expect(first.id).toBe(connection.sessionId);
    expect(await connection.session()).toBe(first);
    let liveAtLost: unknown = 'not heard';
    connection.onStateChange((state) => {
      if (state === 'lost') liveAtLost = connection.live;
    });
    await expire(connection);
    await eventually(() => connection.state === 'connected' && connection.sessionId !== first.id, { what: 'a new session' });
    expect(first.lost.aborted).toBe(true);
    expect(liveAtLost).toBeUndefined();
    const second = connection.live!;
    expect(second.id).toBe(connection.sessionId);
    const rootPath = uniqueRoot('live');
    const held = (await new FairLock(connection, { rootPath }).acquire('r')) as GrantedLock;
    expect(held.session).toBe(second);
    await held.release();
    // A source whose field still names the lost session: the acquire asks session() for the live one.
    const stale = { live: first, session: (signal?: AbortSignal) => connection.session(signal) };
    const again = (await new FairLock(stale, { rootPath }).acquire('r')) as GrantedLock;
    expect(again.session).toBe(second);
    await again.release();
    connection.close();
    expect(connection.live).toBeUndefined();
  });

  it('refuses requests with the same typed errors', async () => {
    const { session, root } = await rooted('errors');
    await expect(session.create(`${root}/missing/child`, '', 'PERSISTENT')).rejects.toBeInstanceOf(ZkNoNodeError);
    await expect(session.create(root, '', 'PERSISTENT')).rejects.toBeInstanceOf(ZkNodeExistsError);
    await session.create(`${root}/eph`, '', 'EPHEMERAL');
    await expect(session.create(`${root}/eph/x-`, '', 'EPHEMERAL_SEQUENTIAL')).rejects.toBeInstanceOf(ZkNoChildrenForEphemeralsError);
    await session.create(`${root}/dir`, '', 'PERSISTENT');
    await session.create(`${root}/dir/leaf`, '', 'PERSISTENT');
    await expect(session.delete(`${root}/dir`)).rejects.toBeInstanceOf(ZkNotEmptyError);
    await expect(session.delete(`${root}/nothing`)).rejects.toBeInstanceOf(ZkNoNodeError);
    await expect(session.getData(`${root}/nothing`)).rejects.toBeInstanceOf(ZkNoNodeError);
    await expect(session.getChildren(`${root}/nothing`)).rejects.toBeInstanceOf(ZkNoNodeError);
    await expect(session.setData(`${root}/nothing`, Buffer.from('x'))).rejects.toBeInstanceOf(ZkNoNodeError);
  });

  it('numbers sequential nodes by the parent’s creates, and moves cversion and zxids as a server does', async () => {
    const { session, root } = await rooted('zxids');
    const parent = `${root}/q`;
    await session.create(parent, '', 'PERSISTENT'); // a container could be reaped between the steps
    const first = await session.create(`${parent}/x-`, 'a', 'EPHEMERAL_SEQUENTIAL');
    expect(first).toBe(`${parent}/x-0000000000`);
    await session.delete(first);
    const second = await session.create(`${parent}/x-`, 'b', 'EPHEMERAL_SEQUENTIAL');
    expect(second).toBe(`${parent}/x-0000000001`); // deletes do not count in sequence numbers
    const node = await session.getData(second);
    expect(node.data.toString()).toBe('b');
    expect(node.stat.ephemeralOwner).toBe(session.id);
    const list = await session.getChildren(parent);
    expect(list.children).toEqual(['x-0000000001']);
    expect(list.stat.pzxid).toBe(node.stat.czxid); // the last child created
    expect(list.stat.cversion).toBe(3); // two creates and a delete
    expect(list.stat.ephemeralOwner).toBe('0');
    await session.setData(second, Buffer.from('c'));
    const changed = await session.getData(second);
    expect(changed.stat.version).toBe(1);
    expect(changed.stat.mzxid).toBeGreaterThan(node.stat.mzxid);
    expect(changed.stat.czxid).toBe(node.stat.czxid);
    await session.delete(second);
    const after = await session.getChildren(parent);
    expect(after.stat.pzxid).toBeGreaterThan(changed.stat.mzxid);
    await session.create(`${parent}/plain`, '', 'PERSISTENT'); // any create counts
    await session.delete(`${parent}/plain`);
    expect(await session.create(`${parent}/x-`, '', 'EPHEMERAL_SEQUENTIAL')).toBe(`${parent}/x-0000000003`);
  });

  it('fires a node watch once, on a change or a deletion, and never after cancel', async () => {
    const { session, root } = await rooted('watch');
    const path = `${root}/n`;
    const missing = session.watchNode(path, () => undefined);
    expect(await missing.armed).toBeNull();
    await session.create(path, '', 'PERSISTENT');
    let changes = 0;
    const watch = session.watchNode(path, () => (changes += 1));
    expect((await watch.armed)?.version).toBe(0);
    let cancelledFired = false;
    session.watchNode(path, () => (cancelledFired = true)).cancel();
    await session.setData(path, Buffer.from('1'));
    await session.setData(path, Buffer.from('2'));
    await eventually(() => changes === 1, { what: 'the change' });
    let deleted = false;
    const again = session.watchNode(path, () => (deleted = true));
    expect((await again.armed)?.version).toBe(2);
    await session.delete(path);
    await eventually(() => deleted, { what: 'the deletion' });
    expect(changes).toBe(1);
    expect(cancelledFired).toBe(false);
  });

  it('deletes a session’s ephemeral nodes when it closes, tells watchers, and reaps the emptied container', async () => {
    const { session: observer, root } = await rooted('ephemeral');
    const parent = `${root}/q`;
    await observer.create(parent, '', 'CONTAINER');
    const owner = await connect();
    const mine = await (await owner.session()).create(`${parent}/x-`, '', 'EPHEMERAL_SEQUENTIAL');
    let told = false;
    observer.watchNode(mine, () => (told = true));
    const ownerSession = await owner.session();
    owner.close();
    expect(ownerSession.lost.aborted).toBe(true);
    await expect(ownerSession.getData(mine)).rejects.toBeInstanceOf(ZkSessionLostError);
    await eventually(() => told, { what: 'the watch on the ephemeral node' });
    await eventually(async () => !(await observer.getChildren(root)).children.includes('q'), { what: 'the container to be reaped' });
  });

  it('keeps ACLs: a node open to one digest refuses another client', async () => {
    const { session, root } = await rooted('acl');
    expect(await session.getAcl(root)).toEqual([{ scheme: 'world', id: 'anyone', perms: ZK_PERMS.ALL }]);
    const owner = await connect({ digest: 'alice:secret' });
    const ownerSession = await owner.session();
    const path = `${root}/guarded`;
    await ownerSession.create(path, '', 'PERSISTENT');
    const acl = [
      { scheme: 'digest', id: digestId('alice:secret'), perms: ZK_PERMS.ALL },
      { scheme: 'world', id: 'anyone', perms: ZK_PERMS.READ },
    ];
    await ownerSession.setAcl(path, acl);
    expect(await ownerSession.getAcl(path)).toEqual(acl);
    // Only a client with ADMIN sees the password hash.
    expect(await session.getAcl(path)).toEqual([{ ...acl[0], id: 'alice:x' }, acl[1]]);
    await expect(session.create(`${path}/x`, '', 'PERSISTENT')).rejects.toBeInstanceOf(ZkNoAuthError);
    await expect((await session.getChildren(path)).children).toEqual([]);
    await ownerSession.create(`${path}/x`, '', 'PERSISTENT');
    await expect(session.delete(`${path}/x`)).rejects.toBeInstanceOf(ZkNoAuthError);
    await ownerSession.delete(`${path}/x`);
  });
});

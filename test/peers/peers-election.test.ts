/**
 * Our election in Curator's LeaderLatch layout and kazoo's Election layout, with the real Curator
 * (5.4) and kazoo (2.8) on one path: one leader at any time (each leader creates an EPHEMERAL node
 * while it leads; finding it there is an overlap), join order kept across languages, each side's
 * participants listing the other's, and leadership handed over in both directions, by leaving,
 * shutting down and a peer's crash. Curator 5.4 has CURATOR-696 (it can lead on a dead session's node), so this proves
 * handover, not Curator's own safety.
 */
import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import type { Election, LeaderHandle } from '../../lib/index.js';
import { ZkNodeExistsError, ZkNoNodeError } from '../../lib/zookeeper/zk-errors.js';
import type { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { eventually, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';
import { startLockApp } from '../support/lock-app.js';
import { usePeer } from '../support/peers.js';

describe.each([
  { language: 'curator' as const, recipe: "Curator's LeaderLatch" },
  { language: 'kazoo' as const, recipe: "kazoo's Election" },
])('our election and $recipe on one path', ({ language }) => {
  const zk = useZooKeeper();
  // Nothing here waits for a session to time out: a lease a busy machine cannot run out.
  const connect = useConnections(zk, STEADY_SESSION);
  const peer = usePeer(language);
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  async function ours(): Promise<{ elect: (path: string, id: string) => Election; close: () => Promise<void> }> {
    const started = await startLockApp(zk, { layout: language, rootPath: uniqueRoot('unused'), ...STEADY_SESSION, shutdownGraceMs: 2000 });
    let closed = false;
    const close = async () => {
      if (!closed) await started.application.close();
      closed = true;
    };
    closers.push(close);
    return { elect: (path, id) => started.locks.elect('shared', { layout: language, zkPath: path, id }), close };
  }

  async function sharedPath(name: string): Promise<{ path: string; inside: string; connection: ZkConnection }> {
    const root = uniqueRoot(name);
    const connection = await connect();
    const session = await connection.session();
    await session.create(root, '', 'PERSISTENT');
    await session.create(`${root}/election`, '', 'PERSISTENT');
    return { path: `${root}/election`, inside: `${root}/inside`, connection };
  }

  /** As the peers do: the leader creates `inside` while it leads, and deletes it when told it no longer leads. */
  async function actAsLeader(connection: ZkConnection, handle: LeaderHandle, inside: string): Promise<{ overlap: boolean }> {
    const session = await connection.session();
    let overlap = false;
    try {
      await session.create(inside, '', 'EPHEMERAL');
    } catch (error) {
      if (!(error instanceof ZkNodeExistsError)) throw error;
      overlap = true;
    }
    const stopped = new Promise<void>((resolve) =>
      handle.signal.addEventListener('abort', () => {
        session.delete(inside).catch((error: unknown) => error instanceof ZkNoNodeError || Promise.reject(error)).finally(resolve);
      }),
    );
    handle.stopsWith(stopped);
    return { overlap };
  }

  it('hands leadership over both ways in join order, with one leader at a time', async () => {
    const { path, inside, connection } = await sharedPath(`election-${language}`);
    const nest = await ours();
    const ourElection = nest.elect(path, 'nest');
    const first = await ourElection.leadership();
    expect(await actAsLeader(connection, first, inside)).toEqual({ overlap: false });

    const other = await peer.peer.worker('w1', zk.connectString);
    const latch = other.startLatch(path, { id: 'peer', inside });
    await latch.queued;
    expect(await other.participants(path)).toEqual(['nest', 'peer']);
    expect(await ourElection.participants()).toEqual(['nest', 'peer']);
    expect(await ourElection.leader()).toBe('nest');
    expect(latch.isLeader).toBe(false);

    // Ours leaves: told first, its node goes once its work stopped, then the peer leads.
    await ourElection.close();
    expect(await latch.leader).toEqual({ overlap: false });

    // Ours joins again behind the peer, and leads once the peer leaves.
    const again = nest.elect(path, 'nest');
    await eventually(async () => (await again.participants()).length === 2, { what: 'ours to queue behind the peer' });
    expect(await other.participants(path)).toEqual(['peer', 'nest']);
    expect(again.isLeader()).toBe(false);
    expect(await other.unlatch()).toEqual({ wasLeader: true });
    const second = await again.leadership();
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    expect(await actAsLeader(connection, second, inside)).toEqual({ overlap: false });

    // The peer queues again; our application shuts down (leaves the election): the peer leads.
    const latchAgain = other.startLatch(path, { id: 'peer', inside });
    await latchAgain.queued;
    expect(latchAgain.isLeader).toBe(false);
    await nest.close();
    expect(await latchAgain.leader).toEqual({ overlap: false });
    await other.unlatch();
    await other.close();
  });

  it('follows a peer that leads first, and leads after the peer crashes', async () => {
    const { path, inside, connection } = await sharedPath(`election-${language}-crash`);
    const other = await peer.peer.worker('w2', zk.connectString);
    await other.lead(path, { id: 'peer', inside });
    const nest = await ours();
    const election = nest.elect(path, 'nest');
    await eventually(async () => (await election.participants()).length === 2, { what: 'ours to queue' });
    expect(await election.leader()).toBe('peer');
    expect(election.isLeader()).toBe(false);
    await other.close(); // a crash: its session ends, the latch never closed
    const handle = await election.leadership();
    // The peer's `inside` was ephemeral in its session: gone with it, so no overlap.
    expect(await actAsLeader(connection, handle, inside)).toEqual({ overlap: false });
    await nest.close();
  });
});

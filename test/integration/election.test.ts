/**
 * The election recipe on a real ZooKeeper: first come leads, a change wakes one participant, a lost
 * term queues again with a higher token, resign goes to the back, close leaves, and a group is never
 * both an election and a lock.
 */
import { describe, expect, it } from 'vitest';
import { ElectionClosedError, IncompatibleLockError, InvalidOptionsError, InvalidResourceNameError, LeadershipLostError, LockLostError } from '../../lib/errors.js';
import { Candidacy } from '../../lib/recipes/candidacy.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { startLockApp } from '../support/lock-app.js';
import type { LockEvent } from '../../lib/index.js';
import { childrenOf, eventually, expireSession, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, watchesByPath } from '../support/zk-fixtures.js';

describe('leader election on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  // Nothing here waits for a session to time out: a lease a busy machine cannot run out.
  const connect = useConnections(zk, STEADY_SESSION);

  async function participants(count: number, rootPath: string, group = 'relay') {
    const joined: Candidacy[] = [];
    for (let i = 0; i < count; i += 1) {
      const connection = await connect();
      const candidacy = new Candidacy(connection, group, { id: `p${i}` }, { rootPath });
      joined.push(candidacy);
      // Join in turn: each once its node is listed, so that the queue order is the join order.
      await eventually(async () => (await childrenOf(connection, `${rootPath}/${group}`)).length === i + 1, { what: `p${i} to queue` });
    }
    return joined;
  }

  it('lets the first participant lead, lists the others in order, and hands over on close with a higher token', async () => {
    const root = uniqueRoot('election-order');
    const [a, b, c] = await participants(3, root);
    const first = await a!.leadership();
    expect(a!.isLeader()).toBe(true);
    expect(b!.isLeader()).toBe(false);
    expect(await c!.participants()).toEqual(['p0', 'p1', 'p2']);
    expect(await c!.leader()).toBe('p0');
    await a!.close();
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBeInstanceOf(LeadershipLostError);
    expect((first.signal.reason as LeadershipLostError).end).toBe('left');
    const second = await b!.leadership();
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    expect(c!.isLeader()).toBe(false);
    expect(await c!.participants()).toEqual(['p1', 'p2']);
    await expect(a!.leadership()).rejects.toBeInstanceOf(ElectionClosedError);
    await Promise.all([b!.close(), c!.close()]);
    expect(await childrenOf((await connect()), `${root}/relay`)).toEqual([]);
  });

  it('decides the first term for each participant: the first one leads (decided true) before anyone asks, the next waits (false)', async () => {
    const root = uniqueRoot('election-decided');
    const first = new Candidacy(await connect(), 'relay', { id: 'first' }, { rootPath: root });
    expect(await first.decided).toBe(true);
    expect(first.isLeader()).toBe(true); // no wait for leadership(): it leads when decided says so
    const second = new Candidacy(await connect(), 'relay', { id: 'second' }, { rootPath: root });
    expect(await second.decided).toBe(false);
    expect(second.isLeader()).toBe(false);
    await first.close();
    await second.leadership();
    expect(await second.decided).toBe(false); // the first term's, not the current one
    const closedEarly = new Candidacy(await connect(), 'relay', { id: 'third' }, { rootPath: root });
    await closedEarly.close();
    expect(await closedEarly.decided).toBe(false);
    await second.close();
  });

  it('has each participant watch only the one before it (the leader its own node), so a change wakes one', async () => {
    const root = uniqueRoot('election-herd');
    const all = await participants(4, root);
    await all[0]!.leadership();
    const watched = async () => {
      const byPath = await watchesByPath(zk.connectString);
      return new Map([...byPath].filter(([path, count]) => path.startsWith(`${root}/`) && count > 0));
    };
    const sorted = async () => (await childrenOf(await connect(), `${root}/relay`)).sort((x, y) => x.slice(-10).localeCompare(y.slice(-10)));
    const nodes = await sorted();
    const expected = (names: string[]) =>
      new Map(names.slice(0, -1).map((name, i) => [`${root}/relay/${name}`, i === 0 ? 2 : 1] as const)); // the leader's node: its own watch and its follower's
    await eventually(async () => JSON.stringify([...(await watched())].sort()) === JSON.stringify([...expected(nodes)].sort()), {
      what: 'one watch per predecessor',
    });
    await all[0]!.resign(); // to the back: the next leads, the old leader watches the last
    await all[1]!.leadership();
    const after = await sorted();
    expect(after).toHaveLength(4);
    await eventually(async () => JSON.stringify([...(await watched())].sort()) === JSON.stringify([...expected(after)].sort()), {
      what: 'one watch per predecessor after the resign',
    });
    await Promise.all(all.map((each) => each.close()));
  });

  it('sends a resigning leader to the back of the queue, its signal aborted before the next one leads', async () => {
    const root = uniqueRoot('election-resign');
    const [a, b] = await participants(2, root);
    const first = await a!.leadership();
    let abortedBeforeNext = false;
    const next = b!.leadership().then((handle) => {
      abortedBeforeNext = first.signal.aborted;
      return handle;
    });
    expect(await a!.resign()).toBe(true);
    const second = await next;
    expect(abortedBeforeNext).toBe(true);
    expect(await b!.resign()).toBe(true);
    const third = await a!.leadership();
    expect(BigInt(third.fencingToken)).toBeGreaterThan(BigInt(second.fencingToken));
    expect(await b!.resign()).toBe(false); // a follower: nothing changes
    await Promise.all([a!.close(), b!.close()]);
  });

  it('tells its listeners of the end as the signal aborts, before the next participant leads; a wait for leadership can be aborted', async () => {
    const root = uniqueRoot('election-told');
    const [a, b] = await participants(2, root);
    const term = await a!.leadership();
    const order: string[] = [];
    // The leader's work takes 300 ms to stop once told: the change must come before, not after.
    term.stopsWith(new Promise<void>((resolve) => term.signal.addEventListener('abort', () => setTimeout(() => (order.push('a stopped'), resolve()), 300))));
    a!.onChange((change) => order.push(`a:${change.leader}`));
    const aborted = new AbortController();
    const gaveUp = b!.leadership(aborted.signal);
    aborted.abort();
    await expect(gaveUp).rejects.toThrow(/aborted/);
    b!.onChange((change) => order.push(`b:${change.leader}`));
    await a!.resign({ requeueAfterMs: 60_000 });
    await b!.leadership();
    expect(order).toEqual(['a:false', 'a stopped', 'b:true']);
    expect(await b!.participants()).toEqual(['p1']); // a waits out its pause before queueing again
    await Promise.all([a!.close(), b!.close()]);
  });

  it('waits for the leader\'s work to stop (stopsWith) before the next participant leads', async () => {
    const root = uniqueRoot('election-role');
    const [a, b] = await participants(2, root);
    const term = await a!.leadership();
    let stopped = false;
    const role = new Promise<void>((resolve) => term.signal.addEventListener('abort', () => setTimeout(() => ((stopped = true), resolve()), 300)));
    term.stopsWith(role);
    const next = b!.leadership().then(() => stopped);
    const resigned = a!.resign();
    // Told, its work still stopping, its node still there: no longer the leader by any account.
    expect([a!.state, a!.isLeader(), a!.current]).toEqual(['following', false, undefined]);
    // Nor by its handle: the lock taken away, though its node stays until the work stopped.
    expect([term.isHeld(), term.validUntil, (term.signal.reason as LeadershipLostError).end]).toEqual([false, Number.NEGATIVE_INFINITY, 'resigned']);
    expect(() => term.assertHeld()).toThrow(term.signal.reason as LeadershipLostError);
    await resigned;
    expect(await next).toBe(true);
    await Promise.all([a!.close(), b!.close()]);
  });

  it('ends a term whose node someone else deleted (a loss, told as leadership lost) and leads again with a higher token', async () => {
    const root = uniqueRoot('election-deleted');
    const [solo] = await participants(1, root);
    const first = await solo!.leadership();
    const observer = await connect();
    const [node] = await childrenOf(observer, `${root}/relay`);
    await (await observer.session()).delete(`${root}/relay/${node}`);
    await eventually(() => first.signal.aborted, { what: 'the term to end' });
    const reason = first.signal.reason as LeadershipLostError;
    expect(reason).toBeInstanceOf(LeadershipLostError);
    expect([reason.end, reason.reason, reason.group]).toEqual(['lost', 'deleted', 'relay']);
    const second = await solo!.leadership();
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    await solo!.close();
  });

  it('queues again after its session expires, and leads again with a higher token', async () => {
    const root = uniqueRoot('election-expire');
    const connection = await connect();
    const solo = new Candidacy(connection, 'relay', { id: 'solo' }, { rootPath: root });
    const changes: boolean[] = [];
    solo.onChange((change) => changes.push(change.leader));
    const first = await solo.leadership();
    await expireSession(connection);
    await eventually(() => first.signal.aborted, { what: 'the term to end' });
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect((first.signal.reason as LeadershipLostError).end).toBe('lost');
    expect(() => first.assertHeld()).toThrow(LeadershipLostError);
    const second = await solo.leadership();
    expect(BigInt(second.fencingToken)).toBeGreaterThan(BigInt(first.fencingToken));
    expect(changes).toEqual([true, false, true]);
    await solo.close();
  });

  it('refuses a group that is a lock, and a lock on a group that is an election', async () => {
    const root = uniqueRoot('election-refuse');
    const connection = await connect();
    const lock = new FairLock(connection, { rootPath: root });
    const held = await lock.acquire('jobs');
    const candidacy = new Candidacy(connection, 'jobs', { id: 'x' }, { rootPath: root });
    await expect(candidacy.leadership()).rejects.toThrow(IncompatibleLockError);
    expect(candidacy.state).toBe('failed');
    await held.release();
    await candidacy.close();
    const elected = new Candidacy(connection, 'relay', { id: 'y' }, { rootPath: root });
    await elected.leadership();
    await expect(lock.acquire('relay', { waitTimeoutMs: 2000 })).rejects.toThrow(/in use as a leader election/);
    await elected.close();
    expect(await childrenOf(connection, `${root}/relay`)).toEqual([]);
  });

  it('refuses an empty id and one too long for its node, at once', async () => {
    const connection = await connect();
    expect(() => new Candidacy(connection, 'g', { id: '' })).toThrow(InvalidOptionsError);
    expect(() => new Candidacy(connection, 'g', { id: 'x'.repeat(2000) })).toThrow(/at most 1024 fit/);
    // The limit it names is the id's own: one byte more than it fails, the limit itself fits.
    let refusal: unknown;
    try {
      new Candidacy(connection, 'g', { id: 'x'.repeat(2000) });
    } catch (error) {
      refusal = error;
    }
    const limit = Number(/an id of at most (\d+) bytes/.exec(String(refusal))![1]);
    expect(() => new Candidacy(connection, 'g', { id: 'x'.repeat(limit + 1) })).toThrow(InvalidOptionsError);
    const fits = new Candidacy(connection, 'g', { id: 'x'.repeat(limit) }, { rootPath: uniqueRoot('election-id') });
    await fits.close();
    expect(() => new Candidacy(connection, 'g', { id: 'y'.repeat(1025), layout: 'curator' })).toThrow(/an id of at most 1024 bytes/);
  });

  it('LockService.elect: one Election per group, events, heldLock(group), the group refused as a lock, left at shutdown', async () => {
    const rootPath = uniqueRoot('election-service');
    const a = await startLockApp(zk, { rootPath, ...STEADY_SESSION, shutdownGraceMs: 2000 });
    const b = await startLockApp(zk, { rootPath, ...STEADY_SESSION });
    const events: LockEvent[] = [];
    const subscription = a.locks.events$.subscribe((event) => events.push(event));
    const ours = a.locks.elect('relay', { id: 'a' });
    expect(a.locks.elect('relay', { id: 'a' })).toBe(ours);
    expect(() => a.locks.elect('relay', { id: 'other' })).toThrow(/already an election of this LockService, joined with id "a"/);
    expect(a.locks.elect('relay')).toBe(ours); // what is left out matches
    expect(() => a.locks.elect('')).toThrow(InvalidResourceNameError);
    expect(() => a.locks.elect('x', { layout: 'zoo' as never })).toThrow(InvalidOptionsError);
    const term = await ours.leadership();
    const theirs = b.locks.elect('relay', { id: 'b' });
    const changes: boolean[] = [];
    theirs.changes$.subscribe((change) => changes.push(change.leader));
    await eventually(async () => (await theirs.participants()).length === 2, { what: 'b to queue' });
    expect(await theirs.leader()).toBe('a');
    expect(a.locks.heldLock('relay')).toBe(term);
    expect(b.locks.heldLock('relay')).toBeUndefined();
    await expect(a.locks.acquire('relay')).rejects.toThrow(IncompatibleLockError);
    await expect(b.locks.requestRelease('relay')).rejects.toThrow(/is a leader election .*Election.resign/);
    expect(a.locks.sessionInfo().elections).toEqual([{ group: 'relay', id: 'a', state: 'leading', fencingToken: term.fencingToken }]);
    await a.application.close(); // shutdown leaves the election: the leader is told, then its node goes
    expect(term.signal.aborted).toBe(true);
    const next = await theirs.leadership();
    expect(BigInt(next.fencingToken)).toBeGreaterThan(BigInt(term.fencingToken));
    expect(events.filter((event) => event.type !== 'connection').map((event) => event.type)).toEqual(['elected', 'term-ended']);
    expect(changes).toEqual([false, true]);
    subscription.unsubscribe();
    await b.application.close();
    expect(changes).toEqual([false, true, false]);
  });
  it('a failed election stays failed for a while, then the next elect() of its group joins anew', async () => {
    const rootPath = uniqueRoot('election-rejoin');
    const { application, locks } = await startLockApp(zk, { rootPath, ...STEADY_SESSION });
    const connection = await connect();
    const held = await new FairLock(connection, { rootPath }).acquire('jobs'); // another process's lock on the group
    const failed = locks.elect('jobs');
    await expect(failed.leadership()).rejects.toThrow(IncompatibleLockError);
    expect(locks.sessionInfo().elections).toMatchObject([{ group: 'jobs', state: 'failed' }]);
    await held.release();
    expect(locks.elect('jobs')).toBe(failed); // a @Leader call on every tick must not make a node each time
    failed.failedAt! -= 10_000; // as if it failed 10 s ago
    const again = locks.elect('jobs');
    expect(again).not.toBe(failed);
    await again.leadership();
    await application.close();
  });
  it('a group that fails again right after it was joined anew waits twice as long before the next join', async () => {
    const rootPath = uniqueRoot('election-rejoin-backoff');
    const { application, locks } = await startLockApp(zk, { rootPath, ...STEADY_SESSION });
    const connection = await connect();
    const held = await new FairLock(connection, { rootPath }).acquire('jobs'); // the path stays a lock's
    const first = locks.elect('jobs');
    await expect(first.leadership()).rejects.toThrow(IncompatibleLockError);
    first.failedAt! -= 10_000;
    const second = locks.elect('jobs');
    expect(second).not.toBe(first);
    await expect(second.leadership()).rejects.toThrow(IncompatibleLockError);
    second.failedAt! -= 10_000; // a second failure in a row waits 20 s
    expect(locks.elect('jobs')).toBe(second);
    second.failedAt! -= 10_000;
    await held.release();
    const third = locks.elect('jobs');
    expect(third).not.toBe(second);
    await third.leadership();
    await third.close();
    await application.close();
  });
});

import 'reflect-metadata';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type LockEvent,
  LockLostError,
  LockService,
  LockTimeoutError,
  type ZkLockModuleOptions,
} from '../../lib/index.js';
import { LockMetrics } from '../../lib/metrics/index.js';
import { runInNewLockContext } from '../../lib/context/lock-context.js';
import { STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper, eventually, expireSession } from '../support/zk-fixtures.js';

type Without<E, K extends string> = E extends unknown ? Omit<E, K> : never;
/** Events without what varies from run to run (times, tokens, the error objects). */
type Shape = Without<LockEvent, 'timestamp' | 'waitMs' | 'holdMs' | 'fencingToken' | 'error' | 'sessionId' | 'owner' | 'permits'>;

function shapes(events: readonly LockEvent[]): Shape[] {
  return events
    .filter((event) => event.type !== 'connection')
    .map((event) => {
      const { timestamp, ...rest } = event as LockEvent & Record<string, unknown>;
      for (const key of ['waitMs', 'holdMs', 'fencingToken', 'error', 'sessionId', 'owner', 'permits']) delete rest[key];
      void timestamp;
      return rest as Shape;
    });
}

describe('LockService.events$ on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const services: LockService[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) await service.onApplicationShutdown();
  });

  async function service(options: Partial<ZkLockModuleOptions> = {}): Promise<{ locks: LockService; events: LockEvent[] }> {
    const locks = new LockService({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('events'), rootAclCheck: 'off', ...options });
    services.push(locks);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    await locks.onModuleInit();
    return { locks, events };
  }

  it('reports an acquire and its release, with the wait, the hold and the handle\'s fencing token', async () => {
    const { locks, events } = await service();
    const handle = await locks.acquire('orders:1', { owner: 'job 7' });
    await handle.release();
    expect(shapes(events)).toEqual([
      { type: 'requested', resource: 'orders:1', mode: 'exclusive', tryOnly: false },
      { type: 'acquired', resource: 'orders:1', mode: 'exclusive', reentrant: false },
      { type: 'released', resource: 'orders:1', mode: 'exclusive', reentrant: false },
    ]);
    const [requested, acquired, released] = events.filter((event) => event.type !== 'connection');
    expect(requested).toMatchObject({ owner: 'job 7' });
    expect(acquired).toMatchObject({ owner: 'job 7', fencingToken: handle.fencingToken });
    expect(released).toMatchObject({ fencingToken: handle.fencingToken });
    if (acquired?.type !== 'acquired' || released?.type !== 'released') throw new Error('unexpected events');
    expect(acquired.waitMs).toBeGreaterThanOrEqual(0);
    expect(released.holdMs).toBeGreaterThanOrEqual(0);
  });

  it('with holdAtLeastMs, the release is reported when the node goes at the end of the hold, not when the caller lets go', async () => {
    const { locks, events } = await service();
    const handle = await locks.acquire('orders:held', { holdAtLeastMs: 600_000 });
    await handle.release(); // resolves at once: the lock stays held for the rest of its minimum hold
    expect(shapes(events).map((event) => event.type)).toEqual(['requested', 'acquired']);
    await locks.beforeApplicationShutdown(); // ends every minimum hold now: the node goes
    expect(shapes(events)).toEqual([
      { type: 'requested', resource: 'orders:held', mode: 'exclusive', tryOnly: false },
      { type: 'acquired', resource: 'orders:held', mode: 'exclusive', reentrant: false },
      { type: 'released', resource: 'orders:held', mode: 'exclusive', reentrant: false },
    ]);
    expect(handle.isHeld()).toBe(false);
  });

  it('the connection events tell the session\'s state, starting with connected', async () => {
    const { events } = await service();
    expect(events[0]).toMatchObject({ type: 'connection', state: 'connected' });
    expect((events[0] as { sessionId: string }).sessionId).toMatch(/^[0-9a-f]+$/);
  });

  it('a waiter that times out and a busy tryAcquire are timed-out events; the holder held through the whole wait', async () => {
    const { locks, events } = await service();
    const holder = await locks.acquire('r');
    await expect(locks.acquire('r', { waitTimeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await locks.tryAcquire('r')).toBeNull();
    await holder.release();
    expect(shapes(events)).toEqual([
      { type: 'requested', resource: 'r', mode: 'exclusive', tryOnly: false },
      { type: 'acquired', resource: 'r', mode: 'exclusive', reentrant: false },
      { type: 'requested', resource: 'r', mode: 'exclusive', tryOnly: false },
      { type: 'timed-out', resource: 'r', mode: 'exclusive', tryOnly: false },
      { type: 'requested', resource: 'r', mode: 'exclusive', tryOnly: true },
      { type: 'timed-out', resource: 'r', mode: 'exclusive', tryOnly: true },
      { type: 'released', resource: 'r', mode: 'exclusive', reentrant: false },
    ]);
    const timedOut = events.find((event) => event.type === 'timed-out')!;
    const released = events.find((event) => event.type === 'released')!;
    if (timedOut.type !== 'timed-out' || released.type !== 'released') throw new Error('unexpected events');
    // Causal, not a timing bound: the waiter's whole wait happened while the holder held.
    expect(released.holdMs).toBeGreaterThanOrEqual(timedOut.waitMs);
  });

  it('an aborted wait is an aborted event, and another error a failed event with its name', async () => {
    const { locks, events } = await service();
    const holder = await locks.acquire('r');
    const controller = new AbortController();
    const waiting = locks.acquire('r', { signal: controller.signal });
    await eventually(() => events.filter((event) => event.type === 'requested').length === 2, { what: 'the waiter to ask' });
    controller.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
    await expect(locks.semaphore('r', { permits: 2 })).rejects.toThrow();
    await holder.release();
    const types = events.filter((event) => event.type !== 'connection').map((event) => event.type);
    expect(types).toEqual(['requested', 'acquired', 'requested', 'aborted', 'requested', 'failed', 'released']);
    expect(events.find((event) => event.type === 'failed')).toMatchObject({ mode: 'semaphore', permits: 2, errorName: 'IncompatibleLockError' });
  });

  it('a reentrant join is reported as such, and only the lock taken from ZooKeeper counts in the metrics', async () => {
    const { locks, events } = await service();
    const metrics = new LockMetrics();
    metrics.attach(locks);
    await runInNewLockContext(
      async () => {
        const outer = await locks.acquire('doc', { mode: 'write' });
        const inner = await locks.acquire('doc', { mode: 'write' });
        expect(inner.fencingToken).toBe(outer.fencingToken);
        await inner.release();
        await outer.release();
      },
      () => 'POST /doc',
    );
    expect(shapes(events)).toEqual([
      { type: 'requested', resource: 'doc', mode: 'write', tryOnly: false },
      { type: 'acquired', resource: 'doc', mode: 'write', reentrant: false },
      { type: 'requested', resource: 'doc', mode: 'write', tryOnly: false },
      { type: 'acquired', resource: 'doc', mode: 'write', reentrant: true },
      { type: 'released', resource: 'doc', mode: 'write', reentrant: true },
      { type: 'released', resource: 'doc', mode: 'write', reentrant: false },
    ]);
    expect(events.find((event) => event.type === 'acquired')).toMatchObject({ owner: 'POST /doc' });
    const snapshot = metrics.snapshot();
    expect(snapshot).toMatchObject({ acquired: 1, reentrantAcquired: 1, released: 1, held: 0, sessionState: 'connected' });
    expect(snapshot.waitSeconds.count).toBe(1);
    expect(snapshot.holdSeconds.count).toBe(1);
  });

  it('acquireAll and withLock report each lock they take', async () => {
    const { locks, events } = await service();
    await locks.withLock('single', () => undefined);
    const handles = await locks.acquireAll(['b', { resource: 'a', mode: 'read' }, { resource: 'c', permits: 3 }]);
    await Promise.all(handles.map((handle) => handle.release()));
    const acquired = events.filter((event) => event.type === 'acquired').map((event) => `${event.resource}:${event.mode}`);
    expect(acquired).toEqual(['single:exclusive', 'a:read', 'b:exclusive', 'c:semaphore']);
    expect(events.filter((event) => event.type === 'released')).toHaveLength(4);
  });

  it('a lost session: one lost event per lock taken (not per reentrant holder), then lost and connected on the connection', async () => {
    const connection = await connect();
    const { locks, events } = await service({ connection });
    let held!: { signal: AbortSignal };
    const done = runInNewLockContext(async () => {
      const outer = await locks.acquire('job');
      const inner = await locks.acquire('job');
      held = outer;
      await eventually(() => outer.signal.aborted, { what: 'the holder to hear of the loss' });
      await expect(inner.release()).rejects.toBeInstanceOf(LockLostError);
      await expect(outer.release()).rejects.toBeInstanceOf(LockLostError);
    });
    await eventually(() => held !== undefined, { what: 'the locks to be taken' });
    const lostSession = connection.sessionCredentials()!;
    await expireSession(zk.connectString, lostSession);
    await done;
    await eventually(() => events.some((event) => event.type === 'connection' && event.state === 'connected' && event.sessionId !== lostSession.id), {
      what: 'a new session',
    });
    const lost = events.filter((event) => event.type === 'lost');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ resource: 'job', errorName: 'LockLostError' });
    // Taking the session over to expire it cuts this client off first: its lease may run out before
    // it hears of the expiry. Either way the event says which.
    expect(['session-expired', 'lease-expired']).toContain((lost[0] as { reason: string }).reason);
    expect((lost[0] as { error: unknown }).error).toBe(held.signal.reason);
    expect(events.filter((event) => event.type === 'released')).toEqual([]);
    const states = events.filter((event) => event.type === 'connection').map((event) => event.state);
    // The supplied connection was connected before the service subscribed.
    expect(states.indexOf('lost')).toBeGreaterThanOrEqual(0);
    expect(states.lastIndexOf('connected')).toBeGreaterThan(states.indexOf('lost'));
  });

  it('a lock taken away at shutdown is lost, later acquires fail as closed, and the connection ends closed', async () => {
    const { locks, events } = await service({ shutdownGraceMs: 20 });
    const held = await locks.acquire('job');
    await locks.beforeApplicationShutdown();
    expect(held.signal.aborted).toBe(true);
    await expect(locks.acquire('other')).rejects.toThrow(/shut down/);
    await locks.onApplicationShutdown();
    const lost = events.find((event) => event.type === 'lost');
    expect(lost).toMatchObject({ resource: 'job', fencingToken: held.fencingToken });
    expect((lost as { error: Error }).error.message).toMatch(/shutting down/);
    expect(events.find((event) => event.type === 'failed')).toMatchObject({ resource: 'other', errorName: 'LockServiceClosedError' });
    expect(events.at(-1)).toMatchObject({ type: 'connection', state: 'closed' });
  });

  it('delivers nothing to a subscriber that left, nor earlier events to a late one', async () => {
    const locks = new LockService({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('late'), rootAclCheck: 'off' });
    services.push(locks);
    await locks.onModuleInit();
    const early: LockEvent[] = [];
    const subscription = locks.events$.subscribe((event) => early.push(event));
    await (await locks.acquire('r')).release();
    subscription.unsubscribe();
    const before = await locks.acquire('r');
    const late: LockEvent[] = [];
    locks.events$.subscribe((event) => late.push(event));
    await before.release(); // taken while no one listened: not wrapped, so its release is not reported
    await (await locks.acquire('r')).release();
    expect(early.map((event) => event.type)).toEqual(['requested', 'acquired', 'released']);
    expect(late.map((event) => event.type)).toEqual(['requested', 'acquired', 'released']);
  });
});

/**
 * The raw `zookeeper` client for the baselines: the native handle called directly with callbacks,
 * no promise, no wrapper (the package's JavaScript wrappers format a debug string on every call).
 * Nothing any lock written on this addon does can cost less, which is what a floor is for.
 */
import { CREATE_FLAGS, loadNativeModule, type NativeClient, type NativeHandle } from '../../lib/zookeeper/native-client.js';

export const ZNODEEXISTS = -110;
export const ZNONODE = -101;

export interface RawClient {
  readonly client: NativeClient;
  readonly handle: NativeHandle;
  readonly sessionId: string;
  close(): void;
}

export function connectRaw(connect: string, sessionTimeoutMs: number): Promise<RawClient> {
  const Native = loadNativeModule();
  // Deterministic order, as the library uses it: asked to randomise, the C client re-seeds from
  // /dev/urandom on every readiness check, and the floor is the client at its cheapest.
  const config = { connect, timeout: sessionTimeoutMs, debug_level: 0, host_order_deterministic: true };
  const client = new Native(config);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`raw client: no session with ${connect} within 20 s`)), 20_000);
    client.once('connect', () => {
      clearTimeout(timer);
      resolve({ client, handle: client.native, sessionId: client.native.client_id, close: () => client.close() });
    });
    const started = client.native.init(config);
    if (started instanceof Error) reject(started);
  });
}

/** Creates a persistent path and its ancestors; existing ones are fine. */
export async function ensurePath(handle: NativeHandle, path: string): Promise<void> {
  const parts = path.slice(1).split('/');
  for (let i = 1; i <= parts.length; i++) {
    const prefix = `/${parts.slice(0, i).join('/')}`;
    await new Promise<void>((resolve, reject) => {
      handle.a_create(prefix, '', CREATE_FLAGS.PERSISTENT, (rc) =>
        rc === 0 || rc === ZNODEEXISTS ? resolve() : reject(new Error(`create ${prefix}: rc ${rc}`)),
      );
    });
  }
}

/** The sequence number ZooKeeper appended to a node name. */
export function sequenceOf(name: string): number {
  return Number(name.slice(-10));
}

/** Whether `mine` has the lowest sequence among `children` (the lock recipe's "am I first"). */
export function isLowest(children: readonly string[], mine: string): boolean {
  const own = sequenceOf(mine);
  for (const child of children) if (sequenceOf(child) < own) return false;
  return true;
}

type Done = (error?: Error) => void;

/**
 * One uncontended cycle with the create and the listing sent back to back (one round trip), then the
 * delete: two round trips, three requests.
 */
export function rawPipelinedCycle(handle: NativeHandle, parent: string, done: Done): void {
  let created: string | undefined;
  let listed: string[] | undefined;
  let failed = false;
  const fail = (what: string, rc: number): void => {
    if (failed) return;
    failed = true;
    done(new Error(`${what} ${parent}: rc ${rc}`));
  };
  const proceed = (): void => {
    if (created === undefined || listed === undefined) return;
    const mine = created.slice(parent.length + 1);
    if (!isLowest(listed, mine)) return fail('not first in an uncontended queue under', 0);
    handle.a_delete_(created, -1, (rc) => (rc === 0 ? done() : fail('delete', rc)));
  };
  handle.a_create(`${parent}/x-`, '', CREATE_FLAGS.EPHEMERAL_SEQUENTIAL, (rc, _msg, path) => {
    if (rc !== 0) return fail('create', rc);
    created = path;
    proceed();
  });
  handle.a_get_children2(parent, false, (rc, _msg, children) => {
    if (rc !== 0) return fail('list', rc);
    listed = children;
    proceed();
  });
}

/** The same three requests one after the other, as Curator sends them: three round trips. */
export function rawSequentialCycle(handle: NativeHandle, parent: string, done: Done): void {
  handle.a_create(`${parent}/x-`, '', CREATE_FLAGS.EPHEMERAL_SEQUENTIAL, (rc, _msg, path) => {
    if (rc !== 0) return done(new Error(`create under ${parent}: rc ${rc}`));
    handle.a_get_children2(parent, false, (rc2, _msg2, children) => {
      if (rc2 !== 0) return done(new Error(`list ${parent}: rc ${rc2}`));
      if (!isLowest(children, path.slice(parent.length + 1))) return done(new Error(`not first in an uncontended queue under ${parent}`));
      handle.a_delete_(path, -1, (rc3) => (rc3 === 0 ? done() : done(new Error(`delete ${path}: rc ${rc3}`))));
    });
  });
}

/**
 * The floor's requests behind promises, awaited as any promise-based library would: shows what the
 * promise API costs by itself, apart from anything a lock recipe adds.
 */
export async function rawPromiseCycle(handle: NativeHandle, parent: string): Promise<void> {
  const created = new Promise<string>((resolve, reject) =>
    handle.a_create(`${parent}/x-`, '', CREATE_FLAGS.EPHEMERAL_SEQUENTIAL, (rc, _msg, path) =>
      rc === 0 ? resolve(path) : reject(new Error(`create under ${parent}: rc ${rc}`)),
    ),
  );
  const listed = new Promise<string[]>((resolve, reject) =>
    handle.a_get_children2(parent, false, (rc, _msg, children) => (rc === 0 ? resolve(children) : reject(new Error(`list ${parent}: rc ${rc}`)))),
  );
  const path = await created;
  const children = await listed;
  if (!isLowest(children, path.slice(parent.length + 1))) throw new Error(`not first in an uncontended queue under ${parent}`);
  await new Promise<void>((resolve, reject) =>
    handle.a_delete_(path, -1, (rc) => (rc === 0 ? resolve() : reject(new Error(`delete ${path}: rc ${rc}`)))),
  );
}

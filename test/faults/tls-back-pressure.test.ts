import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairLock, LockLostError, ZkConnection } from '../../lib/index.js';
import type { ZkSessionApi } from '../../lib/zookeeper/zk-session-api.js';
import { eventually, watchesByPath } from '../support/zk-admin.js';
import { uniqueRoot } from '../support/zk-fixtures.js';
import type { ZkServer } from '../support/zk-server.js';
import { tlsZooKeeper, type TlsZooKeeper } from '../support/zk-tls-servers.js';

/*
 * Back-pressure over TLS: more bytes in flight than the socket and the server take at once, so the
 * client's TLS writes stop part-way (SSL_write wants to be called again with the same bytes) and its
 * reads arrive in pieces. The addon's C client must keep the TLS stream whole through that: a lost,
 * repeated or reordered record would show as corrupt data, a request never answered, or a broken
 * session. Locking runs through the same pipe meanwhile, and must stay exclusive and fenced.
 */

/** Blobs of 700 kB (under ZooKeeper's 1 MB jute.maxbuffer), 12 of them: 8.4 MB at once, twice. */
const BLOB_BYTES = 700 * 1024;
const BLOBS = 12;
/** More than half of them must come back intact for a run to count. */
const MOST_BLOBS = Math.floor(BLOBS / 2) + 1;
const RESOURCES = 12;
const CYCLES_PER_RESOURCE = 15;

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * How each blob's requests ended. `corrupt`: read back different from what was written (never
 * allowed). `failed`: a request rejected, by error name; the only acceptable one is the session
 * ending because its lease ran out while the pipe was full (the library's own safety rule), which
 * the test reports.
 */
interface BlobOutcome {
  intact: number;
  corrupt: string[];
  failed: string[];
}

/**
 * Bytes this machine's TCP sockets to `port` on 127.0.0.1 have sent but not yet had acknowledged
 * (`tx_queue` in /proc/net/tcp; Linux only): the backlog the server has not taken.
 */
function unsentTo(port: number): number {
  const remote = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let bytes = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[2] === remote && fields[3] === '01') bytes += parseInt(fields[4]!.split(':')[0]!, 16);
  }
  return bytes;
}

interface Traffic {
  readonly blobs: Promise<BlobOutcome>;
  /** Fair-lock cycles on a few resources at once: what each resource's holders saw. */
  readonly locks: Promise<{ overlaps: number; tokensOutOfOrder: number; lost: number; granted: number }>;
}

/** The burst: blobs created, rewritten and read back, and contended lock cycles, all on one TLS session. */
function burst(session: ZkSessionApi, lock: FairLock, root: string): Traffic {
  const blobs = (async (): Promise<BlobOutcome> => {
    const outcome: BlobOutcome = { intact: 0, corrupt: [], failed: [] };
    await session.create(root, '', 'PERSISTENT');
    await Promise.all(
      Array.from({ length: BLOBS }, async (_, i) => {
        const path = `${root}/blob-${i}`;
        const written = randomBytes(BLOB_BYTES);
        const rewritten = randomBytes(BLOB_BYTES);
        try {
          await session.create(path, written, 'PERSISTENT');
          await session.setData(path, rewritten);
          const read = await session.getData(path);
          if (sha(read.data) === sha(rewritten)) outcome.intact++;
          else outcome.corrupt.push(path);
        } catch (error) {
          outcome.failed.push((error as Error).name);
        }
      }),
    );
    return outcome;
  })();
  const locks = (async () => {
    const figures = { overlaps: 0, tokensOutOfOrder: 0, lost: 0, granted: 0 };
    await Promise.all(
      Array.from({ length: RESOURCES }, async (_, r) => {
        let inside = 0;
        let lastToken = -1n;
        await Promise.all(
          Array.from({ length: CYCLES_PER_RESOURCE }, async () => {
            const held = await lock.acquire(`bp-${r}`, { waitTimeoutMs: 60_000 });
            figures.granted++;
            if (++inside > 1) figures.overlaps++;
            const token = BigInt(held.fencingToken);
            if (token <= lastToken) figures.tokensOutOfOrder++;
            lastToken = token;
            await new Promise((resolve) => setImmediate(resolve));
            inside--;
            if (held.signal.aborted) figures.lost++;
            await held.release().catch((error: unknown) => {
              if (!(error instanceof LockLostError)) throw error;
            });
          }),
        );
      }),
    );
    return figures;
  })();
  return { blobs, locks };
}

describe('TLS under back-pressure (secure port, client certificates)', () => {
  let zk: TlsZooKeeper;
  let server: ZkServer;
  const opened: ZkConnection[] = [];

  beforeAll(async () => {
    zk = tlsZooKeeper();
    // Sessions of 20 s (a lease of 5 s): long enough that the burst itself does not end them.
    server = await zk.startServer(['maxSessionTimeout=30000']);
  }, 120_000);
  afterAll(async () => {
    for (const connection of opened) connection.close();
    await server?.stop();
    zk?.remove();
  });

  async function tlsClient(): Promise<{ connection: ZkConnection; session: ZkSessionApi; lock: FairLock; root: string }> {
    const connection = new ZkConnection({ connectionString: zk.side.address(server), tls: zk.side.tls, sessionTimeoutMs: 20_000 });
    opened.push(connection);
    await connection.connect();
    expect(connection.tls).toBe(true);
    const root = uniqueRoot('tls-bp');
    return { connection, session: await connection.session(), lock: new FairLock(connection, { rootPath: `${root}-locks` }), root };
  }

  /** Removes the blobs, then lists what the test left: lock nodes under its root, and watches under its roots. */
  async function leftBehind(connection: ZkConnection, root: string): Promise<{ nodes: string[]; watches: string[] }> {
    const session = await connection.session(); // a new one, if the lease ended the first
    for (const child of (await session.getChildren(root)).children) await session.delete(`${root}/${child}`);
    await session.delete(root);
    const locks = `${root}-locks`;
    const nodes: string[] = [];
    const none = () => [] as string[];
    for (const parent of await session.getChildren(locks).then((list) => list.children, none)) {
      nodes.push(...(await session.getChildren(`${locks}/${parent}`).then((list) => list.children, none)).map((child) => `${parent}/${child}`));
    }
    const watches = [...(await watchesByPath(server.connectString)).keys()].filter((path) => path.startsWith(root));
    return { nodes, watches };
  }

  /** Every lock exclusive and fenced, every blob intact or failed only with the session the lease ended. */
  async function expectSafe(traffic: Traffic, name: string): Promise<void> {
    const blobs = await traffic.blobs;
    const locks = await traffic.locks;
    console.log(`TLS back-pressure, ${name}: ${blobs.intact} of ${BLOBS} blobs intact (at least ${MOST_BLOBS} required) through ${((BLOBS * 2 * BLOB_BYTES) / 2 ** 20).toFixed(1)} MB, ${locks.granted} grants, ${locks.lost} holders told of a loss; failed requests: ${JSON.stringify(blobs.failed)}`);
    expect(blobs.corrupt).toEqual([]);
    // Most blobs went through and were read back whole: a run where the session ended early and
    // every blob failed would prove nothing about the bytes.
    expect(blobs.intact, `blobs intact of ${BLOBS}`).toBeGreaterThanOrEqual(MOST_BLOBS);
    expect(blobs.failed.filter((error) => error !== 'ZkSessionLostError')).toEqual([]);
    if (locks.lost === 0) expect(blobs.failed).toEqual([]); // nothing ended the session
    expect({ overlaps: locks.overlaps, tokensOutOfOrder: locks.tokensOutOfOrder, granted: locks.granted }).toEqual({
      overlaps: 0,
      tokensOutOfOrder: 0,
      granted: RESOURCES * CYCLES_PER_RESOURCE,
    });
  }

  it('17 MB written and read back at once while 180 contended lock cycles share the session: every byte intact, every lock exclusive and fenced, nothing left', async () => {
    const { connection, session, lock, root } = await tlsClient();
    await expectSafe(burst(session, lock, root), 'no stall');
    expect(await leftBehind(connection, root)).toEqual({ nodes: [], watches: [] });
  });

  it('the server stalls (SIGSTOP for a second) with the burst in flight, then goes on: every request answered, bytes intact, locks exclusive and fenced, nothing left', async () => {
    const { connection, session, lock, root } = await tlsClient();
    const securePort = Number(zk.side.address(server).split(':')[1]);
    const traffic = burst(session, lock, root);
    // Stall once the pipe is full: the first blob is in, the rest are being written.
    await eventually(() => session.getChildren(root).then((list) => list.children.length > 0, () => false), { what: 'the first blob', intervalMs: 5 });
    server.pause();
    let backlog: number;
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      backlog = unsentTo(securePort);
    } finally {
      server.resume();
    }
    // The pipe was full: the server stopped taking bytes with much of the burst still to send.
    console.log(`TLS back-pressure: ${backlog} bytes waiting in the client's socket while the server stalled`);
    expect(backlog).toBeGreaterThan(64 * 1024);
    await expectSafe(traffic, 'a 1 s stall');
    expect(await leftBehind(connection, root)).toEqual({ nodes: [], watches: [] });
  });
});

/**
 * Session contact from the C client's own pings (native ping_answered_age, pingAnsweredAt): on an
 * idle session the send time of the latest answered ping moves forward, is never later than when
 * JavaScript read it, and is a lower bound of the answered ping's send time, also when several
 * pings are outstanding at once (the replies held back by a proxy that times each ping through).
 */
import { type Socket, createConnection, createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadNativeModule, type NativeClient, pingAnsweredAt } from '../../lib/zookeeper/native-client.js';
import { startZkServer, type ZkServer } from '../support/zk-server.js';
import { uniqueRoot } from '../support/zk-fixtures.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';
import { FairLock } from '../../lib/recipes/fair-lock.js';

const SESSION_TIMEOUT_MS = 1_500;
const PING_XID = -2;

/**
 * A forwarder that reads ZooKeeper's framing (4-byte length, then the frame; the first frame each
 * way is the connect handshake) and notes when each ping from the client passes, and when each ping
 * reply is handed on; replies (all server traffic, in order) can be held back `replyDelayMs`.
 */
async function startPingProxy(targetPort: number, replyDelayMs: number) {
  const pingsSeen: number[] = [];
  const repliesForwarded: number[] = [];
  const sockets = new Set<Socket>();
  const frames = (onFrame: (frame: Buffer) => void) => {
    let buffered = Buffer.alloc(0);
    return (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const length = buffered.readInt32BE(0);
        onFrame(buffered.subarray(0, 4 + length));
        buffered = buffered.subarray(4 + length);
      }
    };
  };
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    let clientFrames = 0;
    let serverFrames = 0;
    client.on(
      'data',
      frames((frame) => {
        if (clientFrames++ > 0 && frame.readInt32BE(4) === PING_XID) pingsSeen.push(performance.now());
        upstream.write(frame);
      }),
    );
    upstream.on(
      'data',
      frames((frame) => {
        const ping = serverFrames++ > 0 && frame.readInt32BE(4) === PING_XID;
        const forward = (): void => {
          if (ping) repliesForwarded.push(performance.now());
          client.write(frame);
        };
        if (replyDelayMs > 0) setTimeout(forward, replyDelayMs);
        else forward();
      }),
    );
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    pingsSeen,
    repliesForwarded,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('session contact from the C client pings', () => {
  let zk: ZkServer;
  const clients: NativeClient[] = [];
  const proxies: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    zk = await startZkServer();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    for (const proxy of proxies.splice(0)) await proxy.close();
  });
  afterAll(async () => {
    await zk.stop();
  });

  async function connect(port: number): Promise<NativeClient> {
    const Native = loadNativeModule();
    const config = { connect: `127.0.0.1:${port}`, timeout: SESSION_TIMEOUT_MS, debug_level: 0, host_order_deterministic: true };
    const client = new Native(config);
    clients.push(client);
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      const started = client.native.init(config);
      if (started instanceof Error) reject(started);
    });
    return client;
  }

  /**
   * Reads pingAnsweredAt every 10 ms until `until` says so (or 20 s have passed, for the assertions
   * to say what was missing): each value with the time it was read.
   */
  async function sample(client: NativeClient, until: (samples: { at: number; readAt: number }[]) => boolean, also: () => void = () => undefined) {
    const samples: { at: number; readAt: number }[] = [];
    const end = performance.now() + 20_000;
    while (!until(samples) && performance.now() < end) {
      const at = pingAnsweredAt(client.native);
      const readAt = performance.now();
      if (at !== undefined) samples.push({ at, readAt });
      also();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return samples;
  }

  /**
   * The pings answered, in the order seen: one value per ping, the earliest read of it (reads of the
   * same ping differ by the microseconds between reading performance.now() and the age).
   */
  function distinct(samples: { at: number }[]): number[] {
    const values: number[] = [];
    for (const { at } of samples) {
      const last = values[values.length - 1];
      if (last === undefined || Math.abs(at - last) > 5) values.push(at);
      else values[values.length - 1] = Math.min(last, at);
    }
    return values;
  }

  it('on an idle session the answered ping moves forward, never later than when it was read', async () => {
    const proxy = await startPingProxy(Number(zk.connectString.split(':').pop()), 0);
    proxies.push(proxy);
    const client = await connect(proxy.port);
    expect(client.native.timeout).toBe(SESSION_TIMEOUT_MS);
    // No ping answered yet on a fresh connection.
    expect(client.native.ping_answered_age()).toBe(-1);
    expect(pingAnsweredAt(client.native)).toBeUndefined();

    // Pings every third of the timeout when idle: read until three were answered (however long a
    // loaded machine takes), each later than the last.
    const samples = await sample(client, (seen) => distinct(seen).length >= 3);
    for (const s of samples) expect(s.at).toBeLessThanOrEqual(s.readAt);
    const values = distinct(samples);
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThan(values[i - 1]!);
    // Each value is the send time of its own ping: matched in order, one ping each, to the pings
    // that passed the proxy, each passing at or after that value. How long after depends on the
    // machine's load: printed, not bounded.
    const lags: number[] = [];
    let next = 0;
    for (const value of values) {
      while (next < proxy.pingsSeen.length && proxy.pingsSeen[next]! < value) next += 1;
      expect(next, `a ping that passed the proxy at or after ${value}, after the ones matched before`).toBeLessThan(proxy.pingsSeen.length);
      lags.push(Math.round(proxy.pingsSeen[next]! - value));
      next += 1;
    }
    console.log(`idle session: ms from each answered ping's send time to its passing the proxy: ${lags.join(' ')}`);
  });

  it('with replies held back so that two pings are outstanding, the value is the send time of the ping answered, not of a later one', async () => {
    // Each reply 700 ms late: the next ping (sent 500 ms after the last) goes out before it comes.
    const proxy = await startPingProxy(Number(zk.connectString.split(':').pop()), 700);
    proxies.push(proxy);
    const client = await connect(proxy.port);
    let mostOutstanding = 0;
    // Read until two pings were outstanding at once and two were answered.
    const samples = await sample(
      client,
      (seen) => mostOutstanding >= 2 && distinct(seen).length >= 2,
      () => {
        mostOutstanding = Math.max(mostOutstanding, proxy.pingsSeen.length - proxy.repliesForwarded.length);
      },
    );
    expect(mostOutstanding).toBeGreaterThanOrEqual(2);
    expect(client.native.state).toBe(3); // still connected: the late replies kept the session
    const values = distinct(samples);
    expect(values.length).toBeGreaterThanOrEqual(2);
    for (const s of samples) {
      expect(s.at).toBeLessThanOrEqual(s.readAt);
      // Replies come in order: by the time of this read at most n were handed to the client, so the
      // answered ping is one of the first n, which passed the proxy no earlier than this value.
      const n = proxy.repliesForwarded.filter((t) => t <= s.readAt).length;
      expect(n).toBeGreaterThan(0);
      expect(s.at).toBeLessThanOrEqual(proxy.pingsSeen[n - 1]!);
    }
  });
});

describe('the lease counts the pings the server answered', () => {
  let zk: ZkServer;
  const connections: ZkConnection[] = [];
  // A 12 s session: its pings go every ~4 s, and a loaded machine would have to hold an answer back
  // over 5.4 s to make the long lease read. With 2 s sessions a stall of 0.9 s did, and failed the test.
  const SESSION_MS = 12_000;
  beforeAll(async () => {
    zk = await startZkServer({ extraConfig: [`maxSessionTimeout=${SESSION_MS}`] });
  });
  afterAll(async () => {
    for (const connection of connections) await connection.close();
    await zk?.stop();
  });

  /** Renewal reads the lease of a session holding one idle lock sent over `holdMs`. */
  async function renewalReads(leaseMarginMs: number | undefined, holdMs: number): Promise<number> {
    const connection = new ZkConnection({ connectionString: zk.connectString, sessionTimeoutMs: SESSION_MS, leaseMarginMs });
    connections.push(connection);
    await connection.connect();
    const lock = await new FairLock(connection, { rootPath: uniqueRoot('lease-pings') }).acquire('idle');
    const { lease } = lock.session as unknown as { lease: { probes: number } };
    const before = lease.probes;
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    expect(lock.isHeld()).toBe(true);
    const reads = lease.probes - before;
    await lock.release();
    return reads;
  }

  it("with a lease longer than two thirds of the session timeout, the C client's pings keep it: no renewal reads", async () => {
    // T 12 s, lease 10.8 s: the C client pings every ~4 s while idle, and the lease would send a read
    // only if nothing was answered for 5.4 s. The default lease (3 s) needs reads: the control.
    const [withPings, byDefault] = await Promise.all([renewalReads(1_200, 10_000), renewalReads(undefined, 10_000)]);
    console.log(`renewal reads over 10 s holding one lock: leaseMarginMs 1200: ${withPings}; default margin: ${byDefault}`);
    expect(withPings).toBe(0);
    expect(byDefault).toBeGreaterThan(0);
  });
});

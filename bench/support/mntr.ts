/**
 * Server-side counts from ZooKeeper's `mntr`, so the benchmark reports what reached the server, not
 * what a client believes it sent.
 *
 * Requests: ZooKeeper 3.8 has no per-operation counters in mntr, but every request that reaches the
 * final processor is counted once in the read-latency (non-quorum: reads, pings) or update-latency
 * (quorum: writes, session create/close) summary, so `zk_cnt_readlatency + zk_cnt_updatelatency` is
 * the number of requests served. The four-letter commands used to read mntr are not requests and do
 * not appear there (they do bump `zk_packets_received`, which also counts pings; that counter is kept
 * for reference only). Pings of idle sessions do appear: the benchmark asks for the longest session
 * timeout the server allows, so a session idle for the whole of a measurement pings at most a few
 * times a minute.
 *
 * Notifications: the server records, for every watch event it fires, how many watchers it notified
 * (`zk_sum_node_*_watch_count`, one summary per event type); their sum is the number of watch
 * notifications sent to clients.
 */
import { fourLetter } from '../../test/support/zk-server.js';

export interface Counters {
  /** Requests served (reads + writes + pings + session create/close). */
  requests: number;
  reads: number;
  writes: number;
  /** Watch notifications sent, all event types. */
  notifications: number;
  /** Watches currently registered on the server. */
  watches: number;
  packetsReceived: number;
  znodes: number;
  /** Ephemeral nodes in the data tree (`zk_ephemerals_count`): every lock node is one. */
  ephemerals: number;
  /**
   * Write transactions the leader proposed (`zk_proposal_count`): every quorum write, session
   * create/close and reaped container included. Only an ensemble's leader has it; 0 elsewhere.
   */
  proposals: number;
  /** CPU time of the server processes, ms (user + system, from /proc); filled in for an ensemble only, else 0. */
  serverCpuMs: number;
}

export async function readCounters(port: number): Promise<Counters> {
  const text = await fourLetter(port, 'mntr');
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.split('\t');
    if (key && value !== undefined) values.set(key.trim(), Number(value));
  }
  const optional = (key: string): number => {
    const value = values.get(key);
    return value === undefined || Number.isNaN(value) ? 0 : value;
  };
  const get = (key: string): number => {
    const value = values.get(key);
    if (value === undefined || Number.isNaN(value)) {
      throw new Error(`mntr on port ${port} has no numeric ${key}; is 4lw.commands.whitelist set? It answered:\n${text.slice(0, 300)}`);
    }
    return value;
  };
  const reads = get('zk_cnt_readlatency');
  const writes = get('zk_cnt_updatelatency');
  const notifications = ['created', 'deleted', 'changed', 'children'].reduce(
    (sum, type) => sum + get(`zk_sum_node_${type}_watch_count`),
    0,
  );
  return {
    requests: reads + writes,
    reads,
    writes,
    notifications,
    watches: get('zk_watch_count'),
    packetsReceived: get('zk_packets_received'),
    znodes: get('zk_znode_count'),
    ephemerals: get('zk_ephemerals_count'),
    proposals: optional('zk_proposal_count'),
    serverCpuMs: 0,
  };
}

/** after - before, field by field (gauges such as watches and znodes come out as their change). */
export function diffCounters(before: Counters, after: Counters): Counters {
  return {
    requests: after.requests - before.requests,
    reads: after.reads - before.reads,
    writes: after.writes - before.writes,
    notifications: after.notifications - before.notifications,
    watches: after.watches - before.watches,
    packetsReceived: after.packetsReceived - before.packetsReceived,
    znodes: after.znodes - before.znodes,
    ephemerals: after.ephemerals - before.ephemerals,
    proposals: after.proposals - before.proposals,
    serverCpuMs: after.serverCpuMs - before.serverCpuMs,
  };
}

/** Polls mntr until `done(counters)` holds, up to `timeoutMs`; resolves with the last reading. */
export async function waitForCounters(port: number, done: (c: Counters) => boolean, timeoutMs = 30_000, what = 'the server'): Promise<Counters> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counters = await readCounters(port);
    if (done(counters)) return counters;
    if (Date.now() > deadline) throw new Error(`${what} did not reach the expected state within ${timeoutMs} ms (watches ${counters.watches}, znodes ${counters.znodes})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * What the fault suite records: every client's lock events and the injector's actions, each stamped
 * with the machine's monotonic clock (process.hrtime, CLOCK_MONOTONIC on Linux: one clock for every
 * process on the machine), in ms.
 */
import type { ZkTlsOptions } from '../../lib/zookeeper/zk-tls.options.js';

export type LockMode = 'exclusive' | 'read' | 'write';

export type ClientEvent =
  | { type: 'requested'; client: string; op: number; resource: string; mode: LockMode; t: number }
  | { type: 'granted'; client: string; op: number; resource: string; mode: LockMode; t: number; token: string; sequence: number; queueId: string; session: string }
  | { type: 'timed-out'; client: string; op: number; t: number }
  | { type: 'failed'; client: string; op: number; t: number; error: string }
  | { type: 'releasing'; client: string; op: number; t: number }
  | { type: 'released'; client: string; op: number; t: number }
  | { type: 'lost'; client: string; op: number; t: number; detail: string };

/** What the injector did, and when. `target` names a server (`zk2`) or a client (`c3`). */
export interface FaultAction {
  readonly t: number;
  readonly action: string;
  readonly target?: string;
  readonly detail?: string;
}

/** A write (or, for a reader, a read) sent to the fenced store by a holder. */
export interface FencedWrite {
  readonly client: string;
  readonly op: number;
  readonly resource: string;
  readonly mode: LockMode;
  readonly token: string;
  readonly t: number;
}

/** Worker -> harness messages. */
export type WorkerMessage =
  | { kind: 'event'; event: ClientEvent }
  | { kind: 'write'; write: FencedWrite }
  | { kind: 'session'; client: string; id: string; password: string }
  | { kind: 'creating'; client: string }
  /** `writeGrants`: releases of this client that granted by write (QueueGrant.grantByWrite), counted as node writes: no semaphores here. */
  | { kind: 'done'; client: string; writeGrants: number };

export interface WorkerConfig {
  readonly client: string;
  readonly connectionString: string;
  /** TLS to the servers' secure ports; undefined: plain TCP. */
  readonly tls: ZkTlsOptions | undefined;
  readonly rootPath: string;
  readonly sessionTimeoutMs: number;
  /** Resource name -> the modes clients use on it. */
  readonly resources: Record<string, readonly LockMode[]>;
  readonly waitTimeoutMs: number;
  /** Time held between the two fenced writes, ms (random up to this). */
  readonly holdMs: number;
  /** Pause between operations, ms (random up to this). */
  readonly thinkMs: number;
  readonly seed: number;
  /** The connection's leaseMarginMs; undefined: the library's default. */
  readonly leaseMarginMs?: number;
  /** Concurrent callers in the process, one acquire loop each (ops numbered across them). */
  readonly callers: number;
  /** The cohort queue for exclusive and write locks, with these bounds; false: none. */
  readonly cohort: false | { maxHandoffs: number; maxHoldMs: number };
}

/** Harness -> worker messages. */
export type HarnessMessage =
  | { kind: 'start'; config: WorkerConfig }
  | { kind: 'stop' }
  /** Tell the harness just before the next acquire (so it can kill the server right after the create). */
  | { kind: 'mark-next-create' }
  /** Make the next operation this one (what the injector needs to set a fault up). */
  | { kind: 'next'; resource: string; mode: LockMode; holdMs: number };

export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

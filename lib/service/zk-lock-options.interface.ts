import type { CohortOptions } from '../recipes/cohort-lock.js';
import type { LockLayout } from '../queue/layouts.js';
import type { ZkAcl } from '../zookeeper/zk-acl.js';
import type { ZkConnectionOptions } from '../zookeeper/zk-connection.options.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';

/**
 * Options of ZkLockModule. Every duration is in milliseconds. The connection options
 * (connectionString, sessionTimeoutMs, connectTimeoutMs, clientLogLevel) are documented on
 * ZkConnectionOptions.
 */
export interface ZkLockModuleOptions extends Partial<ZkConnectionOptions> {
  /**
   * ZooKeeper path under which every lock lives. Absolute, without a trailing slash.
   * @default '/locks'
   */
  rootPath?: string;
  /**
   * The layout of every lock whose acquire does not say: this library's own, or Apache Curator's or
   * kazoo's lock recipes, to share locks with Java or Python services on the same paths.
   * @default 'nestjs-zk-lock'
   */
  layout?: LockLayout;
  /**
   * How long `acquire` and `withLock` wait when the call does not say, in ms. Absent: wait forever.
   * @default undefined (wait forever)
   */
  defaultWaitTimeoutMs?: number;
  /**
   * A connection you created and manage yourself (a `ZkConnectionLike`): a ZkConnection, or the
   * in-memory one of `nestjs-zk-lock/testing`. The module uses it instead of opening its own, and never closes it.
   * connectionString is then ignored.
   * @default undefined (the module opens and closes its own ZkConnection from connectionString)
   */
  connection?: ZkConnectionLike;
  /**
   * HTTP status of a response whose handler could not get its `@DistributedLock` in time:
   * 409 Conflict or 423 Locked.
   * @default 409
   */
  busyStatus?: 409 | 423;
  /**
   * At shutdown (SIGTERM with enableShutdownHooks), how long holders still running may take to
   * finish, in ms, before their locks are taken away (their signal aborts with a LockLostError).
   * @default 5000
   */
  shutdownGraceMs?: number;
  /**
   * The first 4 digits of every fencing token, 0 to 9999. After ZooKeeper is restored from an older
   * snapshot or an empty data directory, its zxids start over lower and tokens would go backwards:
   * raise this (in every application that shares the locks) before they take locks again.
   * @default 0
   */
  tokenEpoch?: number;
  /**
   * ACL for the nodes the library creates (rootPath, each lock's parent, and the lock nodes; whoever
   * may DELETE on a parent may delete its lock nodes), given in each create request. It must let this
   * client's identity read and write lock nodes (a holder writes its node to grant the lock by
   * write). Each entry is `{ scheme, id, perms }`, `perms` a sum of `ZK_PERMS` (`digestId('user:password')`
   * gives a digest `id`).
   * @default undefined (with `digest`: all rights for that identity, read for everyone; without: open)
   */
  acl?: ZkAcl[];
  /**
   * At start-up, check that the ACL of rootPath lets no one but this client's digest identity create
   * or delete there: `'warn'` logs what is wrong as a warning, once per path, when this client has a
   * `digest` (without one nothing can be protected, so an open rootPath is expected: it is logged
   * only when `logEvents` is on, at its level),
   * `'error'` fails start-up with InvalidOptionsError (with or without a digest), `'off'` skips the
   * check. (A missing rootPath is created then, with the ACL above.)
   * @default 'warn'
   */
  rootAclCheck?: 'warn' | 'error' | 'off';
  /**
   * The cohort queue, for exclusive and write locks: callers of this process that want the same lock
   * queue here, first come, first served, behind one ZooKeeper node, and the lock passes from one to
   * the next without a request to ZooKeeper (each with its own fencing token and lost-lock signal).
   * When a client of another process waits, the process keeps the lock for at most
   * `maxHandoffs` handoffs (@default 16) or `maxHoldMs` ms from the grant (@default 50), then gives it
   * back. `false`: every caller queues in ZooKeeper on its own.
   * @default {} (on, with those bounds)
   */
  cohort?: CohortOptions | false;
  /**
   * Writes every lock event (requested, acquired with its wait, released with its hold, timed out,
   * aborted, failed, a skipped run, connection state) to Nest's Logger, context `ZkLock`, at this
   * level: `true` is `'debug'`. A lost lock is a warning. Off, the library logs only warnings (a lost
   * session, a failed clean-up, a root path others may write to) and costs nothing per lock.
   * @default false
   */
  logEvents?: boolean | 'debug' | 'verbose' | 'log';
  /**
   * OpenTelemetry spans: with `@opentelemetry/api` installed, each acquire is a `lock.acquire` span
   * and each hold a `lock.hold` span, children of the span active where the lock was asked for (see
   * docs/operations.md, Traces). They are recorded only when the application registers an SDK;
   * without the package nothing is loaded. `false`: no spans, and the API is never loaded.
   * @default true
   */
  tracing?: boolean;
}

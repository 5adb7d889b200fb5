import type { ZkConnection, ZkConnectionOptions } from './zookeeper/zk-connection.js';

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
   * How long `acquire` and `withLock` wait when the call does not say, in ms. Absent: wait forever.
   * @default undefined (wait forever)
   */
  defaultWaitTimeoutMs?: number;
  /**
   * A connection you created and manage yourself. The module uses it instead of opening its own,
   * and never closes it. connectionString is then ignored.
   */
  connection?: ZkConnection;
  /**
   * HTTP status of a response whose handler could not get its @DistributedLock in time:
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
}

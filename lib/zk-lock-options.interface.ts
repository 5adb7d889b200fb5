import type { ZkConnectionOptions } from './zookeeper/zk-connection.js';

/**
 * Options of ZkLockModule. Every duration is in milliseconds. The connection options
 * (connectionString, sessionTimeoutMs, connectTimeoutMs, clientLogLevel) are documented on
 * ZkConnectionOptions.
 */
export interface ZkLockModuleOptions extends ZkConnectionOptions {
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
}

/** Options of ZkLockModule. Every duration is in milliseconds. */
export interface ZkLockModuleOptions {
  /**
   * ZooKeeper servers: a comma-separated `host:port` list, optionally followed by a chroot path,
   * e.g. `'zk1:2181,zk2:2181,zk3:2181'`. Required.
   */
  connectionString: string;
  /**
   * Session timeout requested from ZooKeeper, in ms (the server clamps it to its min/max, by default
   * 2 to 20 ticks). A holder disconnected this long is told its lock is lost.
   * @default 15000
   */
  sessionTimeoutMs?: number;
  /**
   * How long start-up waits for the first ZooKeeper session before failing, in ms.
   * @default 10000
   */
  connectTimeoutMs?: number;
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

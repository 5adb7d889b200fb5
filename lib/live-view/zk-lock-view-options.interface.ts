import type { CanActivate, Type } from '@nestjs/common';

/** Options of ZkLockViewModule.register. */
export interface ZkLockViewOptions {
  /**
   * URL path of the page, relative to the app's global prefix; its JSON is served at `<path>/data`.
   * @default 'zk-locks'
   */
  path?: string;
  /**
   * How often the page re-reads the locks, in ms. Each read lists rootPath and reads every lock
   * node under it, once per open page. From 100 to 2147483647.
   * @default 2000
   */
  refreshMs?: number;
  /**
   * Guards for both routes (your authentication, for instance). The page shows owners, hosts and
   * pids: never expose it unguarded. Global guards apply as well.
   * @default []
   */
  guards?: (Type<CanActivate> | CanActivate)[];
  /**
   * How long one read of ZooKeeper may take before the JSON answers 503, in ms. From 100 to
   * 2147483647.
   * @default 5000
   */
  readTimeoutMs?: number;
}

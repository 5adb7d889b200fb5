import type { CanActivate, Type } from '@nestjs/common';
import type { LockAtPath, LockScan } from '../recipes/inspect-elsewhere.js';

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
  /**
   * Locks at exact paths outside rootPath, shared with Curator or kazoo services, shown beside those
   * under rootPath: each read by its `layout`'s rules, or by the layout its nodes' names show.
   * @default [] (only rootPath)
   */
  paths?: readonly LockAtPath[];
  /**
   * Paths whose children are locks of other services (one level down), each child shown by the
   * rules of the layout its nodes' names show; with `layout`, only locks of that layout.
   * @default [] (only rootPath)
   */
  scan?: readonly LockScan[];
}

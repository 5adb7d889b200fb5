import { InvalidOptionsError } from '../errors.js';
import type { CohortOptions } from '../recipes/cohort-lock.js';
import { type KnownKeys, refuseUnknownKeys } from '../shared/known-keys.js';
import { CONNECTION_OPTION_KEYS } from '../zookeeper/zk-connection.options.js';
import type { ZkLockModuleOptions } from './zk-lock-options.interface.js';

/**
 * Every name of ZkLockModuleOptions: the connection's, then the module's own. A field added to the
 * interface and not here (or named here and not there) fails to compile.
 */
const MODULE_OPTION_KEYS = {
  ...CONNECTION_OPTION_KEYS,
  rootPath: true,
  layout: true,
  defaultWaitTimeoutMs: true,
  connection: true,
  busyStatus: true,
  shutdownGraceMs: true,
  tokenEpoch: true,
  acl: true,
  rootAclCheck: true,
  cohort: true,
  logEvents: true,
  tracing: true,
} as const satisfies KnownKeys<ZkLockModuleOptions>;

const COHORT_OPTION_KEYS = { maxHandoffs: true, maxHoldMs: true } as const satisfies KnownKeys<CohortOptions>;

/**
 * Refuses module options (forRoot's, or what forRootAsync's factory or class returns) with a name
 * the module does not know, at the top or in `cohort` (`tls` refuses its own).
 * @throws InvalidOptionsError naming it and the closest known name.
 */
export function refuseUnknownModuleOptions(options: ZkLockModuleOptions): void {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('options', 'ZkLockModule needs an options object with at least connectionString');
  }
  refuseUnknownKeys(options, MODULE_OPTION_KEYS, 'a ZkLockModule option');
  const { cohort } = options;
  if (cohort !== null && typeof cohort === 'object') refuseUnknownKeys(cohort, COHORT_OPTION_KEYS, 'a cohort option', 'cohort.');
}

import type { LoggerService } from '@nestjs/common';
import { ADDON_ENV, nativeAddonInfo } from './native-client.js';
import type { ZkLockConnection } from './zk-lock-connection.js';

let warned = false;

/**
 * Says once per process that the library runs on the `zookeeper` package's addon instead of its own,
 * and why, unless NESTJS_ZK_LOCK_ADDON chose it.
 */
export function warnOnceIfAddonFellBack(connection: ZkLockConnection, logger: LoggerService): void {
  if (warned || connection.addon !== 'zookeeper' || process.env[ADDON_ENV] === 'zookeeper') return;
  warned = true;
  logger.warn(
    `nestjs-zk-lock is using the zookeeper package's native addon: ${nativeAddonInfo().fallbackReason}. ` +
      'Locks work the same; each request costs more CPU (README, "The native addon"). ' +
      `${ADDON_ENV}=zookeeper chooses that addon and silences this warning.`,
  );
}

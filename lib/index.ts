export { ZkLockModule } from './zk-lock.module.js';
export { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition.js';
export type { ZkLockModuleOptions } from './zk-lock-options.interface.js';
export { LockService } from './lock.service.js';
export type { LockHandle, AcquireOptions, HeldLockInfo } from './lock-handle.js';
export { DistributedLock } from './distributed-lock.decorator.js';
export type { DistributedLockOptions, LockResource } from './distributed-lock.decorator.js';
export { DistributedLockInterceptor } from './distributed-lock.interceptor.js';
export { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants.js';
export {
  ZkLockError,
  LockTimeoutError,
  LockAbortedError,
  LockLostError,
  LockNotHeldError,
  InvalidResourceNameError,
  ZkConnectionError,
  InvalidOptionsError,
  LockServiceClosedError,
  LockOperationError,
} from './errors.js';
// Without Nest: the connection and the recipe, usable with plain `new`.
export { ZkConnection } from './zookeeper/zk-connection.js';
export type { ZkConnectionOptions, ConnectionState, ConnectionStateListener } from './zookeeper/zk-connection.js';
export { FairLock, DEFAULT_ROOT_PATH } from './recipes/fair-lock.js';
export type { FairLockOptions, RecipeAcquireOptions } from './recipes/fair-lock.js';
export { encodeResource, MAX_RESOURCE_BYTES } from './zookeeper/paths.js';

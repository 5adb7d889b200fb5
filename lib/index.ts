export { ZkLockModule } from './nest/zk-lock.module.js';
export { ZK_LOCK_MODULE_OPTIONS } from './service/zk-lock.module-definition.js';
export type { ZkLockModuleOptions } from './service/zk-lock-options.interface.js';
export { LockService } from './service/lock.service.js';
export type { LockHandle, HeldLock } from './recipes/lock-handle.js';
export type { AcquireOptions, LockContextPolicy, LockPlacement, LockTarget } from './context/lock-request.js';
export type { LockLayout } from './queue/layouts.js';
export type { ReleaseRequestOptions, ReleaseRequestResult } from './recipes/release-request.js';
export type { LockMode, LockKindOptions } from './recipes/lock-kind.js';
// Leader election: LockService.elect, @Leader, @OnLeadership.
export type { Election, ElectOptions, ElectionChange } from './service/election.js';
export type { LeaderHandle } from './recipes/leader-handle.js';
export { Leader } from './nest/leader.decorator.js';
export { OnLeadership } from './nest/on-leadership.decorator.js';
export type { LeaderOptions, LeaderMethodOptions } from './nest/leader.options.js';
// Observability: LockService.events$ (metrics, the live view and the health check have entry points of their own).
export type {
  LockEvent,
  LockEventType,
  LockEventTarget,
  LockRequestedEvent,
  LockAcquiredEvent,
  LockReleasedEvent,
  LockTimedOutEvent,
  LockAbortedEvent,
  LockFailedEvent,
  LockLostEvent,
  LockReleaseRequestedEvent,
  LockSkippedEvent,
  LockSkipReason,
  LockConnectionEvent,
  LockElectedEvent,
  LockTermEndedEvent,
  LockSessionInfo,
  ElectionInfo,
} from './events/lock-event-types.js';
export { describeLockEvent } from './events/lock-event-logger.js';
export type { LockEventLogLevel } from './events/lock-event-logger.js';
export { DistributedLock } from './nest/distributed-lock.decorator.js';
export type { DistributedLockOptions, LockResource } from './nest/distributed-lock.options.js';
// Busy in RPC, WebSocket and GraphQL terms (HTTP answers with busyStatus).
export { LockBusyException, LOCK_BUSY } from './nest/lock-busy.exception.js';
export type { LockBusyPayload } from './nest/lock-busy.exception.js';
export type { LockOverview, InspectAllOptions } from './recipes/inspect-all.js';
export type { LockAtPath, LockScan } from './recipes/inspect-elsewhere.js';
export {
  ZkLockError,
  LockTimeoutError,
  LockAbortedError,
  LockLostError,
  LockNotHeldError,
  LockReleaseRequestedError,
  InvalidResourceNameError,
  ZkConnectionError,
  ZkTlsError,
  ZkSaslError,
  ZkNativeAddonError,
  ZkRollbackError,
  InvalidOptionsError,
  LockServiceClosedError,
  LockOperationError,
  IncompatibleLockError,
  LockUpgradeError,
  LeadershipLostError,
  ElectionClosedError,
} from './errors.js';
export type { LockLossReason, LeadershipEnd } from './errors.js';
// Without Nest: the connection and the recipe, usable with plain `new`.
export { ZkConnection } from './zookeeper/zk-connection.js';
export type { ZkConnectionOptions } from './zookeeper/zk-connection.options.js';
export type { ClientLogLevel } from './zookeeper/native-client.js';
export type { ConnectionState, ConnectionStateListener } from './zookeeper/zk-connection-like.js';
export type { ZkConnectionLike } from './zookeeper/zk-connection-like.js';
export type { ZkTlsOptions } from './zookeeper/zk-tls.options.js';
export type { ZkSaslOptions, ZkSaslDigestOptions, ZkSaslKerberosOptions } from './zookeeper/zk-sasl.options.js';
export type { ZkTlsFailure } from './zookeeper/zk-tls-probe.js';
// Without Nest: the recipes, usable with plain `new` on a ZkConnection.
export { FairLock } from './recipes/fair-lock.js';
export { ReadWriteLock } from './recipes/read-write-lock.js';
export { Semaphore } from './recipes/semaphore.js';
export { MAX_PERMITS } from './recipes/lock-kind.js';
export { SimpleLock } from './recipes/simple-lock.js';
export { CohortLock } from './recipes/cohort-lock.js';
export { Candidacy } from './recipes/candidacy.js';
export type { CandidacyOptions, CandidacyState, LeadershipChange } from './recipes/candidacy.js';
export type { CohortOptions } from './recipes/cohort-lock.js';
export { MAX_NODE_DATA_BYTES } from './recipes/recipe-runtime.js';
export type { RecipeOptions, RecipeAcquireOptions, LockRecipe } from './recipes/recipe-runtime.js';
export type { LockInspection, LockNodeInfo, LockNodeMode } from './recipes/lock-inspection.js';
export type { InspectOptions } from './recipes/inspect.js';
// ACLs for the `acl` option.
export { ZK_PERMS, digestId } from './zookeeper/zk-acl.js';
export type { ZkAcl } from './zookeeper/zk-acl.js';

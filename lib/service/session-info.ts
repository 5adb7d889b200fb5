import type { ElectionInfo, LockSessionInfo } from '../events/lock-event-types.js';
import type { ZkConnectionLike } from '../zookeeper/zk-connection-like.js';

/** LockService.sessionInfo: the session as a health check reports it, with the locks and elections of the service. */
export function sessionInfoOf(connection: ZkConnectionLike, heldLocks: number, elections: ElectionInfo[]): LockSessionInfo {
  return {
    connectionString: connection.connectionString,
    state: connection.state,
    sessionId: connection.sessionId,
    sessionTimeoutMs: connection.negotiatedSessionTimeoutMs,
    server: connection.currentServer,
    members: connection.ensemble?.members ?? [],
    addon: connection.addon,
    tls: connection.tls,
    heldLocks,
    elections,
  };
}

/**
 * `nestjs-zk-lock/testing`: for your own tests.
 *
 * - In memory, needs nothing: InMemoryZooKeeper, createInMemoryLockService, ZkLockTestingModule.
 *   The real LockService and recipes run on an in-memory ZooKeeper, so locks behave as on a server.
 * - Real servers (Java and the ZooKeeper jar): startZkServer, startZkEnsemble, expireSession and
 *   other tools, on 127.0.0.1, every process stopped when the test process exits.
 */
export { InMemoryZooKeeper, createInMemoryLockService } from './in-memory/in-memory-zookeeper.js';
export type { InMemoryZooKeeperOptions, InMemoryLockServiceOptions, InMemoryClient } from './in-memory/in-memory-zookeeper.js';
export { InMemoryConnection } from './in-memory/in-memory-connection.js';
export type { InMemoryConnectionOptions } from './in-memory/in-memory-connection.js';
export type { ZkStat } from '../zookeeper/native-client.js';
export { ZkLockTestingModule } from './zk-lock-testing.module.js';
export type { ZkLockTestingModuleOptions } from './zk-lock-testing.module.js';

export { startZkServer, TEST_TICK_MS } from './zk-test-server.js';
export type { ZkServer, ZkTestServerOptions } from './zk-test-server.js';
export { startZkEnsemble } from './zk-test-ensemble.js';
export type { ZkEnsemble, ZkEnsembleOptions } from './zk-test-ensemble.js';
export { assertZooKeeperInstalled, ZK_JAR, DEFAULT_ZK_JAR } from './zk-process.js';
export type { ZkInstallOptions } from './zk-process.js';
export { expireSession, watchesByPath, eventually } from './zk-session-tools.js';
export type { ZkSessionCredentials, EventuallyOptions } from './zk-session-tools.js';
export { fourLetter, fourLetterTo, freePorts } from './zk-net.js';
export { ZooKeeperNotInstalledError, ZkTestServerError } from './testing-errors.js';

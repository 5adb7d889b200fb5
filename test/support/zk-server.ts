/**
 * Real ZooKeeper servers for the tests, the benchmark and the demo: the testing kit's own helpers
 * (lib/testing), which users get from `nestjs-zk-lock/testing`.
 */
export { startZkServer, TEST_TICK_MS, type ZkServer, type ZkTestServerOptions as ZkServerOptions } from '../../lib/testing/zk-test-server.js';
export { startZkEnsemble, type ZkEnsemble } from '../../lib/testing/zk-test-ensemble.js';
export { assertZooKeeperInstalled, ZK_JAR } from '../../lib/testing/zk-process.js';
export { fourLetter, freePorts } from '../../lib/testing/zk-net.js';

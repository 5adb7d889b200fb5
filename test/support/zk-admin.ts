/**
 * Administrative views and actions on a ZooKeeper server, with no test-runner dependency: the testing
 * kit's (lib/testing), used by the Vitest fixtures and by the fault suite's harness.
 */
export { eventually, expireSession, watchesByPath } from '../../lib/testing/zk-session-tools.js';
export { fourLetterTo } from '../../lib/testing/zk-net.js';

// Connects to a real ZooKeeper with the installed nestjs-zk-lock, takes a lock and releases it, and
// says on which Node.js; on any error prints its name and message and exits 1.
// usage: node take-lock.mjs <connect string>   (from a directory whose node_modules has nestjs-zk-lock)
import { FairLock, ZkConnection } from 'nestjs-zk-lock';

const connectionString = process.argv[2];
if (!connectionString) throw new Error('usage: node take-lock.mjs <connect string>');
const connection = new ZkConnection({ connectionString });
try {
  await connection.connect();
  const lock = await new FairLock(connection, { rootPath: '/node-versions' }).acquire(`node-${process.versions.node}`, { waitTimeoutMs: 10_000 });
  const token = lock.fencingToken;
  await lock.release();
  console.log(`took and released a lock on Node.js ${process.version} (NODE_MODULE_VERSION ${process.versions.modules}, Node-API ${process.versions.napi}), fencing token ${token}`);
} catch (error) {
  console.log(`${error?.name ?? 'Error'}: ${error?.message ?? String(error)}`);
  process.exitCode = 1;
} finally {
  connection.close();
}

// Connects to a real ZooKeeper with the installed nestjs-zk-lock, takes a lock and releases it, and
// says on which Node.js and CPU, and which addon file the process loaded (from /proc/self/maps); on
// any error prints its name and message and exits 1.
// usage: node take-lock.mjs <connect string>   (from a directory whose node_modules has nestjs-zk-lock)
import { readFileSync } from 'node:fs';
import { FairLock, ZkConnection } from 'nestjs-zk-lock';

/** The zk_native.node mapped into this process, as a path from the package's native/ directory. */
function loadedAddon() {
  const line = readFileSync('/proc/self/maps', 'utf8').split('\n').find((entry) => entry.endsWith('/zk_native.node'));
  return line ? line.slice(line.indexOf('/nestjs-zk-lock/native/') + '/nestjs-zk-lock/native/'.length) : 'none';
}

const connectionString = process.argv[2];
if (!connectionString) throw new Error('usage: node take-lock.mjs <connect string>');
const connection = new ZkConnection({ connectionString });
try {
  await connection.connect();
  const lock = await new FairLock(connection, { rootPath: '/node-versions' }).acquire(`node-${process.versions.node}-${process.arch}`, { waitTimeoutMs: 10_000 });
  const token = lock.fencingToken;
  await lock.release();
  console.log(
    `took and released a lock on Node.js ${process.version} ${process.platform}-${process.arch} (Node-API ${process.versions.napi}) ` +
      `with native/${loadedAddon()}, fencing token ${token}`,
  );
} catch (error) {
  console.log(`${error?.name ?? 'Error'}: ${error?.message ?? String(error)}`);
  process.exitCode = 1;
} finally {
  connection.close();
}

// Starts a real ZooKeeper with the testing kit of the installed tarball (run it from a directory whose
// node_modules has nestjs-zk-lock), writes { connectString, pid } as JSON to the file named by the
// first argument, and stops the server on SIGTERM or SIGINT.
import { writeFileSync } from 'node:fs';
import { startZkServer } from 'nestjs-zk-lock/testing';

const out = process.argv[2];
if (!out) throw new Error('usage: node zk-server.mjs <file for the connect string>');
const server = await startZkServer();
writeFileSync(out, JSON.stringify({ connectString: server.connectString, pid: server.pid }));
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// Keeps the event loop alive until a signal arrives.
setInterval(() => {}, 1 << 30);

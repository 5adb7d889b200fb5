/**
 * A client for the new-address test (test/integration/new-address.test.ts), run in a mount namespace
 * of its own whose /etc/hosts the test rewrites: it holds a lock through a connect string that names
 * the server, and on `check` (a line on stdin) reports whether it kept its session and lock and can
 * take another. Lines of JSON on stdout.
 */
import { createInterface } from 'node:readline';
import { FairLock } from '../../lib/recipes/fair-lock.js';
import { ZkConnection } from '../../lib/zookeeper/zk-connection.js';

const say = (message: object): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`);
};

const connection = new ZkConnection({
  connectionString: process.env.CONNECT!,
  sessionTimeoutMs: Number(process.env.SESSION_MS),
  leaseMarginMs: Number(process.env.MARGIN_MS),
});
const states: string[] = [];
connection.onStateChange((state) => states.push(state));
await connection.connect();
const session = connection.sessionCredentials()!.id;
const locks = new FairLock(connection, { rootPath: process.env.ROOT! });
const held = await locks.acquire('held');
say({ event: 'held', session });

for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'check') continue;
  // Back on its session, or told the lock is lost (then the server is out of reach: no second try).
  const deadline = Date.now() + 30_000;
  while (connection.state !== 'connected' && !held.signal.aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const second = held.signal.aborted
    ? false
    : await locks.acquire('second', { waitTimeoutMs: 10_000 }).then(
        (handle) => handle.release().then(() => true),
        () => false,
      );
  say({ event: 'checked', session: connection.sessionCredentials()?.id, sameSession: connection.sessionCredentials()?.id === session, lost: held.signal.aborted, second, states });
  break;
}
connection.close();
process.exit(0);

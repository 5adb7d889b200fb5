import { createConnection, createServer, type Server } from 'node:net';
import { parseConnectString } from '../zookeeper/connect-string.js';

/**
 * Sends a four-letter word (`srvr`, `mntr`, `wchp`, `dump`, `cons` ...) to a ZooKeeper server and
 * collects the answer until the server closes the socket. The server must allow the word
 * (`4lw.commands.whitelist`; the test servers allow all of them).
 * @param port the server's client port
 * @param host @default '127.0.0.1'
 * @param timeoutMs how long to wait for the answer, in ms. @default 3000
 */
export function fourLetter(port: number, command: string, host = '127.0.0.1', timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port });
    let answer = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${command}: no answer from ${host}:${port} within ${timeoutMs} ms`)));
    socket.on('connect', () => socket.end(command));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Sends a four-letter word to the first server of a connect string (`host:port,host:port/chroot`). */
export function fourLetterTo(connectString: string, command: string): Promise<string> {
  const { host, port } = parseConnectString(connectString).hosts[0]!;
  return fourLetter(port, command, host);
}

/**
 * Picks `count` distinct free ports on 127.0.0.1 by binding port 0. Another process may take one
 * before it is used; the servers fail to start then, and say so.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

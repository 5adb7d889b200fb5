/**
 * A plain TCP forwarder that can be partitioned: while cut (both ways or one way), bytes wait in
 * that direction (as TCP retransmits them) and nothing is closed; healed, they are delivered in
 * order. It never looks at the bytes, so it carries ZooKeeper's quorum links and TLS client
 * connections alike, which the ZooKeeper-aware proxy (zk-proxy.ts) cannot.
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';
import type { Partition } from './zk-proxy.js';

export interface TcpProxy {
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly connectString: string;
  /** Both ways (true) or healed (false). */
  cut(cut: boolean): void;
  /** Holds back the bytes of one direction, or both ('none' heals). */
  partition(which: Partition): void;
  /** Closes every open connection (the client sees a connection loss and reconnects). */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let partition: Partition = 'none';
  const sockets = new Set<Socket>();
  /** The sockets that face the clients; the others face the server. */
  const clients = new Set<Socket>();
  const pending = new Map<Socket, Buffer[]>();
  const holds = (to: Socket): boolean => partition === 'both' || (partition === 'to-client' ? clients.has(to) : partition === 'to-server' && !clients.has(to));
  const send = (to: Socket, chunk: Buffer): void => {
    const held = pending.get(to);
    if (holds(to) || held) (held ?? pending.set(to, []).get(to)!).push(chunk);
    else to.write(chunk);
  };
  const flush = (): void => {
    for (const [to, held] of pending) {
      if (holds(to)) continue;
      for (const chunk of held) to.write(chunk);
      pending.delete(to);
    }
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    clients.add(client);
    const closeBoth = (): void => {
      for (const socket of [client, upstream]) {
        socket.destroy();
        sockets.delete(socket);
        clients.delete(socket);
        pending.delete(socket);
      }
    };
    client.on('data', (chunk) => send(upstream, chunk));
    upstream.on('data', (chunk) => send(client, chunk));
    for (const socket of [client, upstream]) {
      socket.on('close', closeBoth);
      socket.on('error', closeBoth);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const setPartition = (which: Partition): void => {
    partition = which;
    flush();
  };
  return {
    port,
    connectString: `127.0.0.1:${port}`,
    cut: (value) => setPartition(value ? 'both' : 'none'),
    partition: setPartition,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

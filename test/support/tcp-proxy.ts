/**
 * A plain TCP forwarder that can be partitioned: while cut, bytes wait in both directions (as TCP
 * retransmits them) and nothing is closed; healed, they are delivered in order. Used between
 * ZooKeeper servers, whose links the ZooKeeper-aware proxy (zk-proxy.ts) does not understand.
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  cut(cut: boolean): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let cut = false;
  const sockets = new Set<Socket>();
  const pending = new Map<Socket, Buffer[]>();
  const send = (to: Socket, chunk: Buffer): void => {
    const held = pending.get(to);
    if (cut || held) (held ?? pending.set(to, []).get(to)!).push(chunk);
    else to.write(chunk);
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    const closeBoth = (): void => {
      for (const socket of [client, upstream]) {
        socket.destroy();
        sockets.delete(socket);
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
  return {
    port: (server.address() as { port: number }).port,
    cut(value) {
      cut = value;
      if (value) return;
      for (const [to, held] of pending) for (const chunk of held) to.write(chunk);
      pending.clear();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A TCP proxy between clients and one ZooKeeper server, to make network faults happen exactly when a
 * test wants them: drop every connection, refuse new ones, or lose the reply to a create (the server
 * applies it, the client never hears back).
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';

const OP_CREATE = 1;
const OP_CREATE2 = 15;
const OP_CREATE_CONTAINER = 19;

export interface ZkProxy {
  readonly connectString: string;
  /** Closes every open connection (clients see a connection loss and reconnect). */
  dropConnections(): void;
  /** While refusing, new connections are closed at once. */
  setRefusing(refusing: boolean): void;
  /**
   * Arms a one-shot fault: the next create request whose path contains `marker` is forwarded, and the
   * connection is cut the moment the server's next bytes come back, before the client sees them.
   * Resolves when the fault has fired.
   */
  loseNextCreateReply(marker: string): Promise<void>;
  close(): Promise<void>;
}

/** Splits a byte stream into length-prefixed frames; the first frame (the connect handshake) is skipped. */
class FrameReader {
  private buffer = Buffer.alloc(0);
  private handshakeSeen = false;

  push(chunk: Buffer, includeHandshake = false): Buffer[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const frames: Buffer[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readInt32BE(0);
      if (this.buffer.length < 4 + length) break;
      const frame = this.buffer.subarray(4, 4 + length);
      this.buffer = this.buffer.subarray(4 + length);
      if (!this.handshakeSeen) {
        this.handshakeSeen = true;
        if (includeHandshake) frames.push(frame);
        continue;
      }
      frames.push(frame);
    }
    return frames;
  }
}

export async function startZkProxy(target: { host?: string; port: number }): Promise<ZkProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let armed: { marker: Buffer; fired: () => void } | undefined;

  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    sockets.add(client);
    sockets.add(upstream);
    const fromClient = new FrameReader();
    const fromServer = new FrameReader();
    let cutAtXid: { xid: number; fired: () => void } | undefined;
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk) => {
      upstream.write(chunk);
      // Frames: 4-byte length, then (after the connect request) xid and op type.
      for (const frame of fromClient.push(chunk)) {
        const op = frame.length >= 8 ? frame.readInt32BE(4) : -1;
        if (armed && (op === OP_CREATE || op === OP_CREATE2 || op === OP_CREATE_CONTAINER) && frame.includes(armed.marker)) {
          cutAtXid = { xid: frame.readInt32BE(0), fired: armed.fired };
          armed = undefined;
        }
      }
    });
    upstream.on('data', (chunk) => {
      for (const frame of fromServer.push(chunk, true)) {
        if (cutAtXid && frame.length >= 4 && frame.readInt32BE(0) === cutAtXid.xid) {
          // The server applied the create; its reply never reaches the client.
          const { fired } = cutAtXid;
          cutAtXid = undefined;
          closeBoth();
          fired();
          return;
        }
        const header = Buffer.alloc(4);
        header.writeInt32BE(frame.length);
        client.write(Buffer.concat([header, frame]));
      }
    });
    client.on('close', closeBoth);
    upstream.on('close', closeBoth);
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  return {
    connectString: `127.0.0.1:${port}`,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    setRefusing(value) {
      refusing = value;
    },
    loseNextCreateReply(marker) {
      return new Promise((resolve) => {
        armed = { marker: Buffer.from(marker), fired: resolve };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

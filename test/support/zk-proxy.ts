/**
 * A TCP proxy between clients and one ZooKeeper server, to make network faults happen exactly when a
 * test wants them: drop every connection, refuse new ones, or lose the reply to a create (the server
 * applies it, the client never hears back).
 */
import { type Server, type Socket, createConnection, createServer } from 'node:net';

/** One frame seen by the proxy: a request with its opcode name, or the reply to request `xid`. */
export type TrafficEvent = { kind: 'request'; op: string; xid: number } | { kind: 'reply'; xid: number };

const OP_NAMES: Record<number, string> = {
  1: 'create',
  2: 'delete',
  3: 'exists',
  4: 'getData',
  5: 'setData',
  8: 'getChildren',
  12: 'getChildren2',
  14: 'multi',
  18: 'removeWatches',
  15: 'create2',
  19: 'createContainer',
  101: 'setWatches',
  105: 'setWatches2',
  [-11]: 'closeSession',
};
const PING_XID = -2;

const OP_CREATE = 1;
const OP_CREATE2 = 15;
const OP_CREATE_CONTAINER = 19;

/**
 * Which traffic a partition holds back: both ways, only the server's replies, or only the client's
 * requests ('none' heals it).
 */
export type Partition = 'none' | 'both' | 'to-client' | 'to-server';

export interface ZkProxy {
  readonly connectString: string;
  /**
   * Stops forwarding in the given direction without closing anything, as a network partition does:
   * bytes wait (as TCP retransmits them) and are delivered in order once healed with 'none'.
   */
  partition(which: Partition): void;
  /** Closes every open connection (clients see a connection loss and reconnect). */
  dropConnections(): void;
  /**
   * Resets every open connection (TCP RST, as a crashed server's host answers): the client's next
   * send fails at once.
   */
  resetConnections(): void;
  /** While refusing, new connections are closed at once. */
  setRefusing(refusing: boolean): void;
  /**
   * Arms a one-shot fault: the next create request whose path contains `marker` is forwarded, and the
   * connection is cut the moment the server's next bytes come back, before the client sees them.
   * Resolves when the fault has fired.
   */
  loseNextCreateReply(marker: string): Promise<void>;
  /**
   * Every request and reply that went through, in order (pings left out): what the client really
   * put on the wire. Cleared by `clearTraffic`.
   */
  traffic(): TrafficEvent[];
  clearTraffic(): void;
  close(): Promise<void>;
}

/** Splits a byte stream into length-prefixed frames; the first frame (the connect handshake) is skipped. */
class FrameReader {
  private buffer = Buffer.alloc(0);
  private handshakeSeen = false;
  private handshake: Buffer | undefined;

  /** False for the connect handshake's frame, which has no xid. */
  pastHandshake(frame: Buffer): boolean {
    return frame !== this.handshake;
  }

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
        this.handshake = frame;
        if (includeHandshake) frames.push(frame);
        continue;
      }
      frames.push(frame);
    }
    return frames;
  }
}

/** One direction of a proxied connection: forwards, or holds bytes back while partitioned. */
class Gate {
  private held: Buffer[] = [];

  constructor(
    private readonly to: Socket,
    private readonly closed: () => boolean,
  ) {}

  write(chunk: Buffer): void {
    if (this.closed() || this.held.length > 0) this.held.push(chunk);
    else this.to.write(chunk);
  }

  flush(): void {
    const held = this.held;
    this.held = [];
    for (const chunk of held) this.to.write(chunk);
  }
}

export async function startZkProxy(target: { host?: string; port: number }): Promise<ZkProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let armed: { marker: Buffer; fired: () => void } | undefined;
  let traffic: TrafficEvent[] = [];
  let cut: Partition = 'none';
  const gates = new Set<Gate>();

  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    sockets.add(client);
    sockets.add(upstream);
    const toServer = new Gate(upstream, () => cut === 'both' || cut === 'to-server');
    const toClient = new Gate(client, () => cut === 'both' || cut === 'to-client');
    gates.add(toServer);
    gates.add(toClient);
    const fromClient = new FrameReader();
    const fromServer = new FrameReader();
    let cutAtXid: { xid: number; fired: () => void } | undefined;
    const closeBoth = (): void => {
      gates.delete(toServer);
      gates.delete(toClient);
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk) => {
      toServer.write(chunk);
      // Frames: 4-byte length, then (after the connect request) xid and op type.
      for (const frame of fromClient.push(chunk)) {
        const op = frame.length >= 8 ? frame.readInt32BE(4) : -1;
        const xid = frame.length >= 4 ? frame.readInt32BE(0) : 0;
        if (xid !== PING_XID) traffic.push({ kind: 'request', op: OP_NAMES[op] ?? `op${op}`, xid });
        if (armed && (op === OP_CREATE || op === OP_CREATE2 || op === OP_CREATE_CONTAINER) && frame.includes(armed.marker)) {
          cutAtXid = { xid: frame.readInt32BE(0), fired: armed.fired };
          armed = undefined;
        }
      }
    });
    upstream.on('data', (chunk) => {
      for (const frame of fromServer.push(chunk, true)) {
        const xid = frame.length >= 4 ? frame.readInt32BE(0) : 0;
        if (xid !== PING_XID && fromServer.pastHandshake(frame)) traffic.push({ kind: 'reply', xid });
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
        toClient.write(Buffer.concat([header, frame]));
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
    resetConnections() {
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
    },
    setRefusing(value) {
      refusing = value;
    },
    partition(which) {
      cut = which;
      if (which === 'none') for (const gate of gates) gate.flush();
    },
    traffic: () => [...traffic],
    clearTraffic() {
      traffic = [];
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

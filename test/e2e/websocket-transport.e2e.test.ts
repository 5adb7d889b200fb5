/**
 * A socket.io gateway with @DistributedLock handlers (a real socket.io-client against it), and the
 * same gateway on the native ws adapter, on a real ZooKeeper: busy reaches the client in the
 * `exception` event as `{ status: 'error', code: 'LOCK_BUSY', resource, message }`, a socket.io
 * client waiting for an ack gets the same object there, and the server logs no error for it.
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { MessageBody, SubscribeMessage, WebSocketGateway, WsException } from '@nestjs/websockets';
import { io, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { STEADY_SESSION, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

@WebSocketGateway()
class ReportsGateway {
  constructor(private readonly locks: LockService) {}

  @SubscribeMessage('reports.rebuild')
  @DistributedLock((id: string) => `reports:${id}`, { waitTimeoutMs: 0 })
  rebuild(@MessageBody() id: string): { token: string | undefined } {
    return { token: this.locks.heldLock(`reports:${id}`)?.fencingToken };
  }

  @SubscribeMessage('refuse')
  @DistributedLock('reports:42', { waitTimeoutMs: 0 })
  refuse(): never {
    throw new WsException({ status: 'error', message: 'the handler said no' });
  }
}

const BUSY = {
  status: 'error',
  code: 'LOCK_BUSY',
  resource: 'reports:42',
  message: 'The resource "reports:42" is locked by another caller; try again later.',
};

describe('@DistributedLock in a socket.io gateway, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let app: INestApplication;
  let socket: Socket;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('ws'), rootAclCheck: 'off' })],
      providers: [ReportsGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
    locks = app.get(LockService);
    socket = io(await app.getUrl(), { transports: ['websocket'] });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('connect_error', reject);
    });
  });
  afterAll(async () => {
    socket?.disconnect();
    await app?.close();
  });

  /** The next `exception` event. */
  const nextException = (): Promise<unknown> => new Promise((resolve) => socket.once('exception', resolve));

  it('a free lock: the handler runs under it and acks', async () => {
    const reply = (await socket.timeout(10_000).emitWithAck('reports.rebuild', '42')) as { token: string };
    expect(reply.token).toMatch(/^\d{40}$/);
  });

  it('busy: the exception event carries LOCK_BUSY with the resource, the ack comes with it, and the server logs no error', async () => {
    const held = await locks.acquire('reports:42'); // plain code, outside any request: its own holder
    try {
      const exception = nextException();
      // Bounded so that the old behaviour (no ack, ever) fails here instead of hanging the test.
      const ack = await socket.timeout(10_000).emitWithAck('reports.rebuild', '42');
      expect(ack).toEqual(BUSY);
      expect(await exception).toEqual(BUSY);
      // Without an ack asked for: the exception event alone.
      const second = nextException();
      socket.emit('reports.rebuild', '42');
      expect(await second).toEqual(BUSY);
    } finally {
      await held.release();
    }
    expect(logger.errors).toEqual([]);
  });

  it("a handler's own WsException passes through untouched", async () => {
    const exception = nextException();
    socket.emit('refuse', {});
    expect(await exception).toMatchObject({ status: 'error', message: 'the handler said no' });
  });
});

describe('@DistributedLock in a gateway on the native ws adapter, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let app: INestApplication;
  let socket: WebSocket;
  let locks: LockService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('nativews'), rootAclCheck: 'off' })],
      providers: [ReportsGateway],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    locks = app.get(LockService);
    socket = new WebSocket((await app.getUrl()).replace(/^http/, 'ws'));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
  });
  afterAll(async () => {
    socket?.close();
    await app?.close();
  });

  /** The next message the server sends, parsed. */
  const nextMessage = (): Promise<unknown> => new Promise((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));

  it('busy: the client receives { event: "exception", data } with LOCK_BUSY and the resource, and the server logs no error', async () => {
    const free = nextMessage();
    socket.send(JSON.stringify({ event: 'reports.rebuild', data: '42' }));
    expect(await free).toMatchObject({ token: expect.stringMatching(/^\d{40}$/) });
    const held = await locks.acquire('reports:42');
    try {
      const busy = nextMessage();
      socket.send(JSON.stringify({ event: 'reports.rebuild', data: '42' }));
      expect(await busy).toEqual({ event: 'exception', data: BUSY });
    } finally {
      await held.release();
    }
    expect(logger.errors).toEqual([]);
  });
});

/**
 * A TCP microservice (ClientProxy against a real server) with @DistributedLock handlers, on a real
 * ZooKeeper: busy reaches the client as `{ status: 'error', code: 'LOCK_BUSY', resource, message }`,
 * and the server logs no error for it.
 */
import 'reflect-metadata';
import { Controller, type INestMicroservice } from '@nestjs/common';
import { type ClientProxy, ClientProxyFactory, MessagePattern, RpcException, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { freePorts } from '../../lib/testing/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

@Controller()
class ReportsRpc {
  constructor(private readonly locks: LockService) {}

  @MessagePattern('report')
  @DistributedLock('report', { waitTimeoutMs: 0 })
  report(): { token: string | undefined } {
    return { token: this.locks.heldLock('report')?.fencingToken };
  }

  @MessagePattern('refuse')
  @DistributedLock('report', { waitTimeoutMs: 0 })
  refuse(): never {
    throw new RpcException({ status: 'error', message: 'the handler said no' });
  }
}

describe('@DistributedLock in a TCP microservice, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let server: INestMicroservice;
  let client: ClientProxy;
  let locks: LockService;

  beforeAll(async () => {
    const [port] = await freePorts(1);
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, sessionTimeoutMs: 2000, rootPath: uniqueRoot('rpc'), rootAclCheck: 'off' })],
      controllers: [ReportsRpc],
    }).compile();
    server = moduleRef.createNestMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port }, logger });
    await server.listen();
    locks = server.get(LockService);
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('a free lock: the handler runs under it', async () => {
    const reply = await firstValueFrom(client.send<{ token: string }>('report', {}));
    expect(reply.token).toMatch(/^\d{36}$/);
  });

  it('busy: the client receives LOCK_BUSY with the resource, and the server logs no error', async () => {
    const held = await locks.acquire('report'); // plain code, outside any request: its own holder
    try {
      const error = await firstValueFrom(client.send('report', {})).catch((e: unknown) => e);
      expect(error).toEqual({
        status: 'error',
        code: 'LOCK_BUSY',
        resource: 'report',
        message: 'The resource "report" is locked by another caller; try again later.',
      });
    } finally {
      await held.release();
    }
    expect(logger.errors).toEqual([]);
  });

  it("a handler's own RpcException passes through untouched", async () => {
    const error = await firstValueFrom(client.send('refuse', {})).catch((e: unknown) => e);
    expect(error).toEqual({ status: 'error', message: 'the handler said no' });
  });
});

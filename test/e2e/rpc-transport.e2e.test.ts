/**
 * A TCP microservice (ClientProxy against a real server) with @DistributedLock handlers, on a real
 * ZooKeeper: busy reaches the client as `{ status: 'error', code: 'LOCK_BUSY', resource, message }`,
 * and the server logs no error for it.
 */
import 'reflect-metadata';
import { Controller, type INestApplication, type INestMicroservice } from '@nestjs/common';
import { type ClientProxy, ClientProxyFactory, EventPattern, MessagePattern, type MicroserviceOptions, Payload, RpcException, Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { freePorts } from '../../lib/testing/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { STEADY_SESSION, uniqueRoot, useZooKeeper, eventually } from '../support/zk-fixtures.js';

@Controller()
class ReportsRpc {
  constructor(private readonly locks: LockService) {}

  @MessagePattern('reports.rebuild')
  @DistributedLock((id: string) => `reports:${id}`, { waitTimeoutMs: 0 })
  rebuild(@Payload() id: string): { token: string | undefined } {
    return { token: this.locks.heldLock(`reports:${id}`)?.fencingToken };
  }

  @EventPattern('reports.changed')
  @DistributedLock((id: string) => `reports:${id}`, { waitTimeoutMs: 0 })
  changed(@Payload() id: string): void {
    ReportsRpc.changedIds.push(id);
  }

  static changedIds: string[] = [];

  @MessagePattern('refuse')
  @DistributedLock('reports:42', { waitTimeoutMs: 0 })
  refuse(): never {
    throw new RpcException({ status: 'error', message: 'the handler said no' });
  }
}

const BUSY = {
  status: 'error',
  code: 'LOCK_BUSY',
  resource: 'reports:42',
  message: 'The resource "reports:42" is locked by another caller; try again later.',
};

describe('@DistributedLock in a TCP microservice, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let server: INestMicroservice;
  let client: ClientProxy;
  let locks: LockService;

  beforeAll(async () => {
    const [port] = await freePorts(1);
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('rpc'), rootAclCheck: 'off' })],
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
    const reply = await firstValueFrom(client.send<{ token: string }>('reports.rebuild', '42'));
    expect(reply.token).toMatch(/^\d{40}$/);
  });

  it('busy: the client receives LOCK_BUSY with the resource, and the server logs no error', async () => {
    const held = await locks.acquire('reports:42'); // plain code, outside any request: its own holder
    try {
      const error = await firstValueFrom(client.send('reports.rebuild', '42')).catch((e: unknown) => e);
      expect(error).toEqual(BUSY);
    } finally {
      await held.release();
    }
    expect(logger.errors).toEqual([]);
  });

  it('busy on an event (no reply to carry it): a warning naming the handler, no error, and the handler did not run', async () => {
    const held = await locks.acquire('reports:7');
    try {
      await firstValueFrom(client.emit('reports.changed', '7'));
      await eventually(() => logger.warnings.some((line) => line.includes('"reports:7"')), { what: 'the busy event to be reported' });
    } finally {
      await held.release();
    }
    expect(logger.warnings.find((line) => line.includes('"reports:7"'))).toMatch(/ReportsRpc\.changed did not handle this event.*waitTimeoutMs/);
    expect(ReportsRpc.changedIds).not.toContain('7');
    expect(logger.errors).toEqual([]);
  });

  it("a handler's own RpcException passes through untouched", async () => {
    const error = await firstValueFrom(client.send('refuse', {})).catch((e: unknown) => e);
    expect(error).toEqual({ status: 'error', message: 'the handler said no' });
  });
});

describe('@DistributedLock in a hybrid application (HTTP + TCP microservice, inheritAppConfig), on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const logger = new RecordingLogger();
  let app: INestApplication;
  let client: ClientProxy;

  beforeAll(async () => {
    const [port] = await freePorts(1);
    const moduleRef = await Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath: uniqueRoot('hybrid'), rootAclCheck: 'off' })],
      controllers: [ReportsRpc],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    // inheritAppConfig: without it Nest gives the microservice none of the application's global
    // interceptors and filters, ZkLockModule's included.
    app.connectMicroservice<MicroserviceOptions>({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }, { inheritAppConfig: true });
    await app.startAllMicroservices();
    await app.init();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await app?.close();
  });

  it('busy: the client receives LOCK_BUSY with the resource, and the server logs no error', async () => {
    const held = await app.get(LockService).acquire('reports:42');
    try {
      const error = await firstValueFrom(client.send('reports.rebuild', '42')).catch((e: unknown) => e);
      expect(error).toEqual(BUSY);
    } finally {
      await held.release();
    }
    expect(logger.errors).toEqual([]);
  });
});

import 'reflect-metadata';
import { Readable } from 'node:stream';
import { Controller, Get, type MessageEvent, Sse, StreamableFile } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { map, ReplaySubject, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib/index.js';
import { childrenOf, eventually, STEADY_SESSION, uniqueRoot, useConnections, useZooKeeper } from '../support/zk-fixtures.js';

/**
 * The same guarantees as distributed-lock.e2e.test.ts, on Fastify instead of Express: a busy lock is
 * a 409, and a handler whose response outlives it (an Observable, an event stream, a streamed file)
 * holds its lock until the response ends or the client goes away. Each response is driven by the
 * test (a Subject, a Readable it pushes to), so nothing depends on how long anything takes.
 */

/**
 * What the test pushes into the response that is open now, made by the handler of this request (a
 * test clears it before its request). Replay subjects, and a Readable that buffers: Node sends a
 * response's headers with its first chunk, so the test pushes before it awaits `fetch`, possibly
 * before Nest has subscribed.
 */
const live = {
  ticks: undefined as ReplaySubject<number> | undefined,
  events: undefined as ReplaySubject<number> | undefined,
  file: undefined as Readable | undefined,
  fileClosed: undefined as Promise<void> | undefined,
};

@Controller()
class FastifyTestController {
  @Get('busy')
  @DistributedLock('busy', { waitTimeoutMs: 0 })
  busy(): string {
    return 'free';
  }

  @Get('ticks')
  @DistributedLock('ticks')
  ticks(): Observable<number[]> {
    const ticks = new ReplaySubject<number>();
    live.ticks = ticks;
    const seen: number[] = [];
    return ticks.pipe(map((n) => (seen.push(n), seen)));
  }

  @Sse('events')
  @DistributedLock('events')
  events(): Observable<MessageEvent> {
    const events = new ReplaySubject<number>();
    live.events = events;
    return events.pipe(map((n): MessageEvent => ({ data: { n } })));
  }

  @Get('file')
  @DistributedLock('file')
  file(): StreamableFile {
    const stream = new Readable({ read() {} });
    live.file = stream;
    live.fileClosed = new Promise((resolve) => stream.once('close', () => resolve()));
    return new StreamableFile(stream);
  }
}

/** Reads a streamed body until `text` has arrived. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  let received = '';
  while (!received.includes(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the response ended before ${JSON.stringify(text)} (got ${JSON.stringify(received)})`);
    received += Buffer.from(value).toString();
  }
  return received;
}

describe('@DistributedLock on the Fastify adapter, on a real ZooKeeper', () => {
  const zk = useZooKeeper();
  const connect = useConnections(zk, STEADY_SESSION);
  const rootPath = uniqueRoot('fastify');
  let app: NestFastifyApplication;
  let url: string;
  const nodes = async (resource: string) => childrenOf(await connect(), `${rootPath}/${resource}`);

  /**
   * The handler holds `resource` and has made this request's subject or stream (`made`, cleared by
   * the test before its request). The lock is granted before the method runs, so the node alone
   * does not say the method ran: what the test pushes then goes to no response (a previous test's
   * subject or stream), and the test waits forever or reads nothing.
   */
  async function handlerRunning(resource: string, made: () => unknown): Promise<void> {
    await eventually(async () => made() !== undefined && (await nodes(resource)).length === 1, {
      what: `the handler to hold ${resource} and make this request's response`,
    });
  }

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      // Nothing here is about sessions ending: a lease a busy machine cannot run out (see STEADY_SESSION).
      imports: [ZkLockModule.forRoot({ connectionString: zk.connectString, ...STEADY_SESSION, rootPath })],
      controllers: [FastifyTestController],
    }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a request for a held lock with waitTimeoutMs: 0 is a 409 Conflict naming the resource', async () => {
    const holder = await app.get(LockService).acquire('busy');
    try {
      const response = await fetch(`${url}/busy`);
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ statusCode: 409, error: 'Conflict', resource: 'busy' });
    } finally {
      await holder.release();
    }
    const response = await fetch(`${url}/busy`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('free');
  });

  it('an Observable handler holds its lock until the Observable completes', async () => {
    live.ticks = undefined;
    const response = fetch(`${url}/ticks`);
    await handlerRunning('ticks', () => live.ticks);
    live.ticks!.next(1);
    live.ticks!.next(2);
    expect(await app.get(LockService).tryAcquire('ticks')).toBeNull();
    expect(await nodes('ticks')).toHaveLength(1);
    live.ticks!.complete();
    expect(await (await response).json()).toEqual([1, 2]);
    await eventually(async () => (await nodes('ticks')).length === 0, { what: 'ticks released after the Observable completed' });
  });

  it('an Observable handler whose client goes away before it completes releases its lock', async () => {
    const client = new AbortController();
    live.ticks = undefined;
    const responded = fetch(`${url}/ticks`, { signal: client.signal }).catch((error: unknown) => error);
    await handlerRunning('ticks', () => live.ticks);
    live.ticks!.next(1);
    client.abort();
    expect(await responded).toBeInstanceOf(Error);
    await eventually(async () => (await nodes('ticks')).length === 0, { what: 'ticks released when the client left' });
  });

  it('an endless event stream holds its lock until the client goes away', async () => {
    const client = new AbortController();
    live.events = undefined;
    const responded = fetch(`${url}/events`, { signal: client.signal });
    await handlerRunning('events', () => live.events);
    live.events!.next(1);
    const response = await responded;
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    await readUntil(reader, '"n":1');
    live.events!.next(2);
    await readUntil(reader, '"n":2');
    expect(await nodes('events')).toHaveLength(1);
    client.abort();
    await eventually(async () => (await nodes('events')).length === 0, { what: 'events released when the client left' });
  });

  it('a streamed file holds its lock until the stream ends', async () => {
    live.file = undefined;
    const responded = fetch(`${url}/file`);
    await handlerRunning('file', () => live.file);
    live.file!.push('chunk 1\n');
    const reader = (await responded).body!.getReader();
    await readUntil(reader, 'chunk 1');
    expect(await nodes('file')).toHaveLength(1);
    live.file!.push('chunk 2\n');
    live.file!.push(null);
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value).toString();
    expect(rest).toContain('chunk 2');
    await eventually(async () => (await nodes('file')).length === 0, { what: 'file released at the end of the stream' });
  });

  it('a streamed file whose client goes away mid-stream releases its lock', async () => {
    const client = new AbortController();
    live.file = undefined;
    const responded = fetch(`${url}/file`, { signal: client.signal });
    await handlerRunning('file', () => live.file);
    live.file!.push('chunk 1\n');
    const reader = (await responded).body!.getReader();
    await readUntil(reader, 'chunk 1');
    expect(await nodes('file')).toHaveLength(1);
    client.abort();
    await live.fileClosed;
    await eventually(async () => (await nodes('file')).length === 0, { what: 'file released when the client left' });
  });
});

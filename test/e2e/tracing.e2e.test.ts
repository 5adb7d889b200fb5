/**
 * OpenTelemetry spans as an operator sees them: a Nest app on Express, HTTP instrumentation, the
 * SDK's in-memory exporter and a real ZooKeeper. A locked request's `lock.acquire` and `lock.hold`
 * are children of its HTTP server span, with their attributes; busy and timed-out acquires say so;
 * a lost lock ends its hold span with the reason.
 */
import 'reflect-metadata';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import * as otelApi from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Controller, Get, type INestApplication, Module, Param } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DistributedLock, LockService, ZkConnection, ZkLockModule } from '../../lib/index.js';
import type { OtelApi } from '../../lib/events/otel-api.js';
import { eventually, expireSession, uniqueRoot, useZooKeeper } from '../support/zk-fixtures.js';

// The library's narrow view of the API must be what the real package is: this fails to compile if not.
const realApi: OtelApi = otelApi;

/** Lets a test hold a handler inside its lock until it says. */
class Gate {
  private release: (() => void) | undefined;
  entered: Promise<void> = Promise.resolve();
  private enter: (() => void) | undefined;

  arm(): void {
    this.entered = new Promise((resolve) => (this.enter = resolve));
  }

  wait(): Promise<void> {
    this.enter?.();
    return new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release?.();
  }
}

const gate = new Gate();

@Controller()
class OrdersController {
  constructor(private readonly locks: LockService) {}

  @Get('orders/:id/ship')
  @DistributedLock((id: string) => `orders:${id}`)
  ship(@Param('id') id: string) {
    return { token: this.locks.heldLock(`orders:${id}`)?.fencingToken };
  }

  /** Holds `report` until the test opens the gate. */
  @Get('report/hold')
  @DistributedLock('report')
  async holdReport() {
    await gate.wait();
    return { done: true };
  }

  @Get('report')
  @DistributedLock('report', { waitTimeoutMs: 0 })
  report() {
    return { ran: true };
  }

  @Get('report/patient')
  @DistributedLock('report', { waitTimeoutMs: 50 })
  patientReport() {
    return { ran: true };
  }

  @Get('report/skippable')
  @DistributedLock('report', { onBusy: 'skip' })
  skippableReport() {
    return { ran: true };
  }
}

describe('OpenTelemetry spans of a locked HTTP request (Express, real ZooKeeper)', () => {
  const zk = useZooKeeper({ own: true });
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let application: INestApplication;
  let connection: ZkConnection;
  let base: string;
  let stopInstrumentation: () => void;

  beforeAll(async () => {
    provider.register();
    stopInstrumentation = registerInstrumentations({ instrumentations: [new HttpInstrumentation()] });
    // The instrumentation patches `http` when it is required; Nest's Express adapter has it already.
    createRequire(import.meta.url)('http');
    connection = new ZkConnection({ connectionString: zk.connectString, sessionTimeoutMs: 4000 });
    @Module({
      imports: [ZkLockModule.forRoot({ connection, rootPath: uniqueRoot('tracing'), shutdownGraceMs: 50 })],
      controllers: [OrdersController],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    application = moduleRef.createNestApplication({ logger: false });
    await application.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(application.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    gate.open();
    await application?.close();
    connection?.close();
    stopInstrumentation?.();
    await provider.shutdown();
    otelApi.trace.disable();
    otelApi.context.disable();
  });

  beforeEach(() => exporter.reset());

  const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
  const serverSpan = () => {
    const servers = exporter.getFinishedSpans().filter((span) => span.kind === otelApi.SpanKind.SERVER);
    expect(servers).toHaveLength(1);
    return servers[0]!;
  };
  const isChildOf = (child: ReadableSpan, parent: ReadableSpan) =>
    child.spanContext().traceId === parent.spanContext().traceId && child.parentSpanContext?.spanId === parent.spanContext().spanId;

  it('the library sees the real API as its narrow type', () => {
    expect(typeof realApi.trace.getTracer).toBe('function');
  });

  it('a granted lock: lock.acquire and lock.hold are children of the HTTP server span, with the resource, mode, layout, wait and fencing token', async () => {
    const response = await fetch(`${base}/orders/42/ship`);
    expect(response.status).toBe(200);
    const { token } = (await response.json()) as { token: string };
    await eventually(() => exporter.getFinishedSpans().some((span) => span.kind === otelApi.SpanKind.SERVER), { what: 'the server span' });
    const server = serverSpan();
    const [acquire] = named('lock.acquire');
    const [hold] = named('lock.hold');
    expect(acquire && isChildOf(acquire, server)).toBe(true);
    expect(hold && isChildOf(hold, server)).toBe(true);
    expect(acquire!.instrumentationScope.name).toBe('nestjs-zk-lock');
    expect(acquire!.attributes).toMatchObject({
      'lock.resource': 'orders:42',
      'lock.mode': 'exclusive',
      'lock.layout': 'nestjs-zk-lock',
      'lock.outcome': 'granted',
      'lock.fencing_token': token,
      'lock.reentrant': false,
    });
    expect(acquire!.attributes['lock.wait_ms']).toEqual(expect.any(Number));
    expect(hold!.attributes).toMatchObject({ 'lock.resource': 'orders:42', 'lock.outcome': 'released', 'lock.fencing_token': token });
    // The hold begins where the acquire ends, and ends with the request's lock released.
    expect(hrMs(hold!.startTime)).toBeGreaterThanOrEqual(hrMs(acquire!.endTime));
    expect(hold!.status.code).toBe(otelApi.SpanStatusCode.UNSET);
  });

  it('a busy lock (waitTimeoutMs 0) answers 409, and its acquire span says busy; waiting 50 ms says timed_out', async () => {
    gate.arm();
    const holding = fetch(`${base}/report/hold`);
    await gate.entered;
    const busy = await fetch(`${base}/report`);
    expect(busy.status).toBe(409);
    const patient = await fetch(`${base}/report/patient`);
    expect(patient.status).toBe(409);
    gate.open();
    expect((await holding).status).toBe(200);
    await eventually(() => named('lock.hold').length === 1 && named('lock.acquire').length === 3, { what: 'every lock span' });
    const outcomes = named('lock.acquire').map((span) => span.attributes['lock.outcome']);
    expect(outcomes.sort()).toEqual(['busy', 'granted', 'timed_out']);
    // Each acquire is a child of its own request's server span.
    const servers = exporter.getFinishedSpans().filter((span) => span.kind === otelApi.SpanKind.SERVER);
    expect(servers).toHaveLength(3);
    for (const acquire of named('lock.acquire')) expect(servers.filter((server) => isChildOf(acquire, server))).toHaveLength(1);
  });

  it('a run skipped for a busy lock is a lock.skipped event on the request\'s span', async () => {
    gate.arm();
    const holding = fetch(`${base}/report/hold`);
    await gate.entered;
    const skipped = await fetch(`${base}/report/skippable`);
    expect(skipped.status).toBe(200);
    gate.open();
    expect((await holding).status).toBe(200);
    await eventually(() => exporter.getFinishedSpans().filter((span) => span.kind === otelApi.SpanKind.SERVER).length === 2, { what: 'both server spans' });
    const withEvent = exporter.getFinishedSpans().filter((span) => span.events.some((event) => event.name === 'lock.skipped'));
    expect(withEvent).toHaveLength(1);
    expect(withEvent[0]!.kind).toBe(otelApi.SpanKind.SERVER);
    expect(withEvent[0]!.events.find((event) => event.name === 'lock.skipped')!.attributes).toMatchObject({
      'lock.resource': 'report',
      'lock.skip_reason': 'busy',
    });
  });

  it('a lost lock ends its hold span with the loss reason and an error status', async () => {
    gate.arm();
    const holding = fetch(`${base}/report/hold`);
    await gate.entered;
    expect(named('lock.hold')).toEqual([]);
    await expireSession(zk.connectString, connection.sessionCredentials()!);
    await eventually(() => named('lock.hold').length === 1, { what: 'the hold span to end with the loss' });
    const [hold] = named('lock.hold');
    expect(hold!.attributes).toMatchObject({ 'lock.resource': 'report', 'lock.outcome': 'lost', 'error.type': 'LockLostError' });
    // Taking the session over to expire it cuts this client off first: its lease may run out before
    // it hears of the expiry. Either way the span says which.
    expect(['session-expired', 'lease-expired']).toContain(hold!.attributes['lock.loss_reason']);
    expect(hold!.status.code).toBe(otelApi.SpanStatusCode.ERROR);
    gate.open();
    await holding;
    await eventually(() => connection.state === 'connected' || connection.state === 'reconnected', { what: 'a new session' });
  });
});

function hrMs(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

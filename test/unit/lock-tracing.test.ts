/**
 * The spans' pure logic, on a fake OpenTelemetry API: how each outcome is named, when a span is
 * left out, and that a hold span ends once. The spans of a real request on a real ZooKeeper are in
 * test/e2e/tracing.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LeadershipLostError, LockAbortedError, LockLostError, LockService, LockTimeoutError } from '../../lib/index.js';
import type { LockRequest } from '../../lib/context/lock-request.js';
import { LockTracing } from '../../lib/events/lock-tracing.js';
import type { OtelApi, OtelAttributes, OtelSpan } from '../../lib/events/otel-api.js';

class FakeSpan implements OtelSpan {
  readonly attributes: OtelAttributes = {};
  readonly events: string[] = [];
  readonly eventAttributes: (OtelAttributes | undefined)[] = [];
  status: number | undefined = undefined;
  ends = 0;

  constructor(
    readonly name: string,
    attributes: OtelAttributes | undefined,
    readonly parent: object | undefined,
    private readonly recording: boolean,
  ) {
    Object.assign(this.attributes, attributes);
  }

  setAttributes(attributes: OtelAttributes): void {
    Object.assign(this.attributes, attributes);
  }
  addEvent(name: string, attributes?: OtelAttributes): void {
    this.events.push(name);
    this.eventAttributes.push(attributes);
  }
  setStatus(status: { code: number }): void {
    this.status = status.code;
  }
  recordException(): void {}
  isRecording(): boolean {
    return this.recording;
  }
  end(): void {
    this.ends += 1;
  }
}

function fakeApi(recording = true) {
  const spans: FakeSpan[] = [];
  const active = { request: 'span' };
  const api: OtelApi = {
    trace: {
      getTracer: () => ({
        startSpan: (name, options, context) => {
          const span = new FakeSpan(name, options?.attributes, context, recording);
          spans.push(span);
          return span;
        },
      }),
      getSpan: () => undefined,
    },
    context: { active: () => active },
    SpanStatusCode: { ERROR: 2 },
  };
  return { api, spans, active };
}

const target = { resource: 'report', mode: 'exclusive' as const, permits: undefined, owner: 'GET /report' };
const request = (waitTimeoutMs?: number) => ({ layout: 'nestjs-zk-lock', zkPath: undefined, waitTimeoutMs }) as LockRequest;

describe('lock spans', () => {
  it('an acquire span starts in the active context, with the resource, mode, layout and owner', () => {
    const { api, spans, active } = fakeApi();
    LockTracing.create(undefined, api)!.startAcquire(target, request(), false);
    expect(spans[0]!.parent).toBe(active);
    expect(spans[0]!.attributes).toEqual({
      'lock.resource': 'report',
      'lock.mode': 'exclusive',
      'lock.layout': 'nestjs-zk-lock',
      'lock.owner': 'GET /report',
    });
  });

  it('a granted acquire ends its span and opens the hold span beside it, under the same parent', () => {
    const { api, spans, active } = fakeApi();
    const hold = LockTracing.create(undefined, api)!.startAcquire(target, request(), false)!.granted(3.5, '42', false);
    const [acquire, held] = spans;
    expect(acquire).toMatchObject({ ends: 1, attributes: { 'lock.outcome': 'granted', 'lock.wait_ms': 3.5, 'lock.fencing_token': '42' } });
    expect(held).toMatchObject({ name: 'lock.hold', parent: active, ends: 0, attributes: { 'lock.resource': 'report', 'lock.fencing_token': '42' } });
    hold.releaseRequested();
    hold.released();
    expect(held).toMatchObject({ ends: 1, events: ['lock.release_requested'], attributes: { 'lock.outcome': 'released' }, status: undefined });
  });

  it.each([
    ['a timeout while waiting is timed_out', request(100), new LockTimeoutError('report', 100), 'timed_out', undefined],
    ['a timeout when the caller would not wait is busy', request(0), new LockTimeoutError('report', 0), 'busy', undefined],
    ['an abort is aborted', request(), new LockAbortedError('report', 'stop'), 'aborted', undefined],
    ['any other error is error, with an error status', request(), new TypeError('boom'), 'error', 2],
  ])('%s', (_what, asked, error, outcome, status) => {
    const { api, spans } = fakeApi();
    LockTracing.create(undefined, api)!.startAcquire(target, asked, false)!.failed(1, error);
    expect(spans[0]).toMatchObject({ ends: 1, status, attributes: { 'lock.outcome': outcome } });
    if (outcome === 'error') expect(spans[0]!.attributes['error.type']).toBe('TypeError');
  });

  it('tryAcquire finding the lock held is busy', () => {
    const { api, spans } = fakeApi();
    LockTracing.create(undefined, api)!.startAcquire(target, request(), true)!.busy(0.2);
    expect(spans[0]!.attributes).toMatchObject({ 'lock.try_only': true, 'lock.outcome': 'busy' });
  });

  it('a lost lock ends the hold span once, with the reason; the failed release after it changes nothing', () => {
    const { api, spans } = fakeApi();
    const hold = LockTracing.create(undefined, api)!.startAcquire(target, request(), false)!.granted(1, '7', false);
    const lost = new LockLostError('report', '7', 'the session expired', 'session-expired');
    hold.aborted(lost);
    hold.released(lost);
    expect(spans[1]).toMatchObject({ ends: 1, status: 2, attributes: { 'lock.outcome': 'lost', 'lock.loss_reason': 'session-expired' } });
  });

  it('a change of leadership is a span event on the active span: lock.elected, lock.term_ended with how the term ended', () => {
    const { api } = fakeApi();
    const active = new FakeSpan('GET /jobs', undefined, undefined, true);
    const tracing = LockTracing.create(undefined, { ...api, trace: { ...api.trace, getSpan: () => active } })!;
    tracing.eventOnActiveSpan({ type: 'elected', group: 'relay', participantId: 'web-1', fencingToken: '42', waitMs: 3, timestamp: 0 });
    const error = new LeadershipLostError('relay', '42', 'resigned', 'given-up', 'resigned');
    tracing.eventOnActiveSpan({ type: 'term-ended', group: 'relay', participantId: 'web-1', fencingToken: '42', leadMs: 9, end: 'resigned', reason: 'given-up', error, timestamp: 0 });
    tracing.eventOnActiveSpan({ type: 'requested', ...target, tryOnly: false, timestamp: 0 }); // an acquire's: its spans say it
    expect(active.events).toEqual(['lock.elected', 'lock.term_ended']);
    expect(active.eventAttributes).toEqual([
      { 'lock.group': 'relay', 'lock.participant': 'web-1', 'lock.fencing_token': '42' },
      { 'lock.group': 'relay', 'lock.participant': 'web-1', 'lock.leadership_end': 'resigned', 'lock.loss_reason': 'given-up' },
    ]);
  });

  it('nothing is traced when the span does not record (no SDK registered, or not sampled)', () => {
    const { api } = fakeApi(false);
    expect(LockTracing.create(undefined, api)!.startAcquire(target, request(), false)).toBeUndefined();
  });

  it('tracing: false builds no tracing, and any other value than a boolean is refused', () => {
    const { api } = fakeApi();
    expect(LockTracing.create(false)).toBeUndefined();
    expect(LockTracing.create(true, api)).toBeInstanceOf(LockTracing);
    expect(() => new LockService({ connectionString: '127.0.0.1:1', tracing: 'on' as never })).toThrow(/tracing.*must be true or false/);
  });
});

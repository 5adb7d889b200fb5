import { LockAbortedError, LockLostError, LockTimeoutError } from '../errors.js';
import type { LockRequest } from '../context/lock-request.js';
import type { LockEvent, LockEventTarget } from './lock-event-types.js';
import type { LockKindOptions, LockMode } from '../recipes/lock-kind.js';
import { loadOtelApi, type OtelApi, type OtelAttributes, type OtelContext, type OtelSpan, type OtelTracer } from './otel-api.js';

/** The instrumentation scope of every span and span event the library records. */
export const TRACER_NAME = 'nestjs-zk-lock';

/**
 * How an acquire ended, as `lock.outcome` of its span: `busy` when the lock was held and the caller
 * would not wait (tryAcquire, or waitTimeoutMs 0), `timed_out` when waitTimeoutMs passed, `aborted`
 * when the caller's signal stopped the wait, `error` for any other failure (`error.type` names it).
 */
export type AcquireOutcome = 'granted' | 'busy' | 'timed_out' | 'aborted' | 'error';

/**
 * The span events recorded on the span active where an event is emitted (a request's, a scheduled
 * job's), by event type. Events about one acquire are its spans' attributes instead, and are absent.
 * Skipped runs and leadership changes belong here: one case each.
 */
function spanEventOf(event: LockEvent): { name: string; attributes: OtelAttributes } | undefined {
  switch (event.type) {
    case 'skipped':
      return { name: 'lock.skipped', attributes: { 'lock.resource': event.resource, 'lock.mode': event.mode, 'lock.skip_reason': event.reason } };
    case 'elected':
      return { name: 'lock.elected', attributes: { 'lock.group': event.group, 'lock.participant': event.participantId, 'lock.fencing_token': event.fencingToken } };
    case 'term-ended':
      return {
        name: 'lock.term_ended',
        attributes: { 'lock.group': event.group, 'lock.participant': event.participantId, 'lock.leadership_end': event.end, 'lock.loss_reason': event.reason },
      };
    default:
      return undefined;
  }
}

/**
 * OpenTelemetry spans for a LockService's acquires: `lock.acquire` from the call to its outcome,
 * then `lock.hold` from the grant to the release or the loss. Both start in the caller's async
 * context, so they are children of the span active there (the request's, with HTTP instrumentation).
 * Attribute names follow the style of OpenTelemetry's semantic conventions, under `lock.`.
 */
export class LockTracing {
  private constructor(
    private readonly api: OtelApi,
    private readonly tracer: OtelTracer,
  ) {}

  /**
   * The tracing of a LockService: undefined when `enabled` is false or `@opentelemetry/api` is not
   * installed (it is then never loaded). With the API but no SDK registered, every span is a
   * non-recording one and the acquire goes on untraced.
   */
  static create(enabled: boolean | undefined, api: OtelApi | undefined = enabled === false ? undefined : loadOtelApi()): LockTracing | undefined {
    return api ? new LockTracing(api, api.trace.getTracer(TRACER_NAME)) : undefined;
  }

  /**
   * Opens an acquire's span; call it synchronously where the caller asked for the lock, so that the
   * active context is the caller's. Undefined when nothing records it (no SDK, or not sampled).
   */
  startAcquire(target: Omit<LockEventTarget, 'timestamp'>, request: LockRequest, tryOnly: boolean): AcquireSpan | undefined {
    const parent = this.api.context.active();
    const attributes: OtelAttributes = {
      'lock.resource': target.resource,
      'lock.mode': target.mode,
      'lock.layout': request.layout,
    };
    if (target.permits !== undefined) attributes['lock.permits'] = target.permits;
    if (target.owner !== undefined) attributes['lock.owner'] = target.owner;
    if (request.zkPath !== undefined) attributes['lock.zk_path'] = request.zkPath;
    const span = this.tracer.startSpan('lock.acquire', { attributes: tryOnly ? { ...attributes, 'lock.try_only': true } : attributes }, parent);
    if (!span.isRecording()) return undefined;
    const wouldNotWait = tryOnly || request.waitTimeoutMs === 0;
    return new AcquireSpan(this.api, this.tracer, span, parent, attributes, wouldNotWait);
  }

  /** Records `event` on the span active where it is emitted, when it is one of spanEventOf's. */
  eventOnActiveSpan(event: LockEvent): void {
    const spanEvent = spanEventOf(event);
    if (spanEvent) this.api.trace.getSpan(this.api.context.active())?.addEvent(spanEvent.name, spanEvent.attributes);
  }
}

/** One acquire's `lock.acquire` span, ended by its outcome. */
export class AcquireSpan {
  constructor(
    private readonly api: OtelApi,
    private readonly tracer: OtelTracer,
    private readonly span: OtelSpan,
    private readonly parent: OtelContext,
    /** What the hold span repeats: resource, mode, layout, permits, owner. */
    private readonly lock: OtelAttributes,
    private readonly wouldNotWait: boolean,
  ) {}

  /** Ends the acquire span and opens the hold span, beside it under the same parent. */
  granted(waitMs: number, fencingToken: string, reentrant: boolean): HoldSpan {
    const held = { 'lock.fencing_token': fencingToken, 'lock.reentrant': reentrant };
    this.span.setAttributes({ 'lock.outcome': 'granted', 'lock.wait_ms': waitMs, ...held });
    // One instant for both: each span reads the clock its own way, so two readings can put the
    // hold's start a fraction of a millisecond before the acquire's end.
    const grantedAt = Date.now();
    this.span.end(grantedAt);
    const hold = this.tracer.startSpan('lock.hold', { attributes: { ...this.lock, ...held }, startTime: grantedAt }, this.parent);
    return new HoldSpan(this.api, hold);
  }

  /** tryAcquire found the lock held. */
  busy(waitMs: number): void {
    this.span.setAttributes({ 'lock.outcome': 'busy', 'lock.wait_ms': waitMs });
    this.span.end();
  }

  /** The acquire threw `error`: a timeout, an abort, or another failure (an error status then). */
  failed(waitMs: number, error: unknown): void {
    const outcome: AcquireOutcome =
      error instanceof LockTimeoutError ? (this.wouldNotWait ? 'busy' : 'timed_out') : error instanceof LockAbortedError ? 'aborted' : 'error';
    this.span.setAttributes({ 'lock.outcome': outcome, 'lock.wait_ms': waitMs });
    if (outcome === 'error') markFailed(this.api, this.span, error);
    this.span.end();
  }
}

/** One handle's `lock.hold` span: ended once, by its release or the loss of its lock. */
export class HoldSpan {
  private ended = false;

  constructor(
    private readonly api: OtelApi,
    private readonly span: OtelSpan,
  ) {}

  /** The handle was released; `error` when the release failed (a lost lock has ended the span already). */
  released(error?: unknown): void {
    if (this.ended) return;
    if (error !== undefined) markFailed(this.api, this.span, error);
    this.end({ 'lock.outcome': error === undefined ? 'released' : 'release_failed' });
  }

  /** The lock's signal aborted: with a LockLostError, the lock was lost, and the span says why. */
  aborted(reason: unknown): void {
    if (this.ended || !(reason instanceof LockLostError)) return;
    markFailed(this.api, this.span, reason);
    this.end({ 'lock.outcome': 'lost', 'lock.loss_reason': reason.reason });
  }

  /** Another service asked for this revocable lock: an event on the hold span. */
  releaseRequested(): void {
    if (!this.ended) this.span.addEvent('lock.release_requested');
  }

  private end(attributes: OtelAttributes): void {
    this.ended = true;
    this.span.setAttributes(attributes);
    this.span.end();
  }
}

/** An error status, `error.type` (the error's name, as OpenTelemetry's conventions have it) and the exception. */
function markFailed(api: OtelApi, span: OtelSpan, error: unknown): void {
  span.setAttributes({ 'error.type': error instanceof Error ? error.name : typeof error });
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** How events and spans name a kind of lock: its mode, or `'semaphore'` when it has permits. */
export function eventModeOf(kind: LockKindOptions): LockMode | 'semaphore' {
  return kind.permits === undefined ? (kind.mode ?? 'exclusive') : 'semaphore';
}

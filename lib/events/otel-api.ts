import { resolveHere } from '../shared/package-require.js';

/**
 * The part of `@opentelemetry/api` (1.x) the library uses, typed narrowly: the package is an optional
 * peer, so no declaration of this library may name it, and a fake fits in unit tests. The e2e test
 * assigns the real module to OtelApi, so the compiler holds these types to the real ones.
 */
export type OtelAttributes = Record<string, string | number | boolean | undefined>;

/** The caller's async context, opaque here. */
export type OtelContext = object;

export interface OtelSpan {
  setAttributes(attributes: OtelAttributes): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error): void;
  isRecording(): boolean;
  /** `endTime` in milliseconds since the epoch; now when absent. */
  end(endTime?: number): void;
}

export interface OtelTracer {
  startSpan(name: string, options?: { attributes?: OtelAttributes; startTime?: number }, context?: OtelContext): OtelSpan;
}

export interface OtelApi {
  readonly trace: {
    getTracer(name: string): OtelTracer;
    getSpan(context: OtelContext): OtelSpan | undefined;
  };
  readonly context: { active(): OtelContext };
  readonly SpanStatusCode: { readonly ERROR: number };
}

const OTEL_API = '@opentelemetry/api';
let loaded: OtelApi | null | undefined;

/**
 * `@opentelemetry/api` when the application has it installed, else undefined (and nothing is
 * loaded: the failed resolution is all it costs, once per process).
 * @throws what the package itself throws when it is installed but cannot load.
 */
export function loadOtelApi(): OtelApi | undefined {
  if (loaded === undefined) loaded = requireOtelApi();
  return loaded ?? undefined;
}

function requireOtelApi(): OtelApi | null {
  try {
    return resolveHere().require(OTEL_API) as OtelApi;
  } catch (error) {
    // Absent: the error names the package itself. A file missing inside an installed copy is a
    // broken install, and is thrown.
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${OTEL_API}'`)) return null;
    throw error;
  }
}

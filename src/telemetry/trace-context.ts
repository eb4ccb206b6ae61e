/**
 * W3C trace context (`traceparent`) as text: what `trigger()` and `backfill()` store
 * with a run so that the run's span, on whichever instance executes it, links to
 * the caller's trace. Written and read here rather than through the app's
 * registered propagator, so it works whatever propagator (if any) the app set up.
 * https://www.w3.org/TR/trace-context/#traceparent-header
 */

/** The fields of an OpenTelemetry `SpanContext` that a `traceparent` carries. */
export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const INVALID_TRACE_ID = '0'.repeat(32);
const INVALID_SPAN_ID = '0'.repeat(16);

/** `00-<trace-id>-<parent-id>-<flags>`; undefined for an invalid (all-zero) context. */
export function formatTraceparent(context: TraceParent): string | undefined {
  const { traceId, spanId, traceFlags } = context;
  if (!/^[0-9a-f]{32}$/.test(traceId) || traceId === INVALID_TRACE_ID) return undefined;
  if (!/^[0-9a-f]{16}$/.test(spanId) || spanId === INVALID_SPAN_ID) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The context a stored `traceparent` names, or undefined when the text is not a
 * valid one (a store may hold anything: a newer version, a hand-edited row). A
 * future version's extra fields are ignored, as the specification asks.
 */
export function parseTraceparent(text: string): TraceParent | undefined {
  const match = TRACEPARENT.exec(text.trim().toLowerCase());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === INVALID_TRACE_ID || spanId === INVALID_SPAN_ID) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/**
 * OpenTelemetry: a job run with `telemetry` on, through the OpenTelemetry SDK, then
 * the spans and metrics the SDK exported, printed as JSON (what the README's
 * "OpenTelemetry" sample shows). An HTTP handler's span triggers the run, the first
 * attempt fails and the retry succeeds; the handler's own span is a child of its
 * `tickwork.run` span, and each run span links to the triggering request's span.
 * Takes about a second.
 *
 *   npm run example:telemetry
 *
 * In an app, the SDK set-up (`@opentelemetry/sdk-node`'s NodeSDK, with an OTLP
 * exporter) registers global providers and `telemetry: true` is all tickwork needs.
 */
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { Scheduler } from '../src/index.js';
// Run from source, so the instrumentation comes from source too: a Scheduler from the installed
// package loads `tickwork/telemetry` by itself (an app bundled to run without node_modules imports it).
import '../src/telemetry/index.js';

/** A reader collected once, at the end (an app's would export on an interval). */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

// What an OpenTelemetry SDK set-up does: a context manager, a tracer and a meter provider.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const spans = new InMemorySpanExporter();
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
const reader = new OnDemandReader();
const meterProvider = new MeterProvider({ readers: [reader] });
trace.setGlobalTracerProvider(tracerProvider);
const tracer = trace.getTracer('my-app');

const scheduler = new Scheduler({ telemetry: { tracerProvider, meterProvider }, logger: false });
scheduler.register({
  name: 'send-digest',
  schedule: '0 8 * * *',
  retry: { limit: 1, initialDelay: '200ms', jitter: 0 },
  handler: async ({ attempt }) => {
    // The app's own span: a child of the run's span.
    await tracer.startActiveSpan('smtp.send', async (span: Span) => {
      span.end();
    });
    if (attempt === 1) throw new Error('SMTP server timed out');
  },
});

const settled = new Promise<void>((resolve) => {
  scheduler.on('run:succeeded', () => resolve());
  scheduler.on('run:failed', () => resolve());
});
await scheduler.start();
// An HTTP request handler triggers the job: its trace context is stored with the run.
await tracer.startActiveSpan('POST /digests', async (span: Span) => {
  await scheduler.trigger('send-digest', { idempotencyKey: 'digest-2026-11-25' });
  span.end();
});
await settled;
await scheduler.stop();

const time = (hr: [number, number]): string => new Date(hr[0] * 1000 + hr[1] / 1e6).toISOString();
/** An exception's stack trace, its first frame only and the path relative to here (short and machine-free). */
const shortStack = (text: unknown): unknown => (typeof text === 'string' ? text.split('\n').slice(0, 2).join('\n').replaceAll(`${process.cwd()}/`, '') : text);
const show = (span: ReadableSpan) => ({
  name: span.name,
  kind: SpanKind[span.kind],
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parentSpanId: span.parentSpanContext?.spanId,
  start: time(span.startTime),
  durationMs: Math.round(span.duration[0] * 1000 + span.duration[1] / 1e6),
  attributes: span.attributes,
  status: { ...span.status, code: SpanStatusCode[span.status.code] },
  events: span.events.map((event) => ({
    name: event.name,
    attributes: { ...event.attributes, 'exception.stacktrace': shortStack(event.attributes?.['exception.stacktrace']) },
  })),
  links: span.links.map((link) => ({ traceId: link.context.traceId, spanId: link.context.spanId })),
});
console.log('spans:');
for (const span of spans.getFinishedSpans()) console.log(JSON.stringify(show(span)));

console.log('metrics:');
const { resourceMetrics } = await reader.collect();
for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
  const points = (metric.dataPoints as { attributes: Attributes; value: unknown }[]).map(({ attributes, value }) => ({
    attributes,
    value:
      metric.dataPointType === DataPointType.HISTOGRAM
        ? (({ count, sum, min, max }) => ({ count, sum, min, max }))(value as { count: number; sum: number; min: number; max: number })
        : value,
  }));
  console.log(JSON.stringify({ name: metric.descriptor.name, unit: metric.descriptor.unit, points }));
}
// CI runs this example: it fails unless both attempts were traced and linked to the request.
const runSpans = spans.getFinishedSpans().filter((span) => span.name === 'tickwork.run');
if (runSpans.length !== 2 || runSpans.some((span) => span.links.length !== 1)) {
  console.error('expected two tickwork.run spans, each linked to the POST /digests span');
  process.exitCode = 1;
}
await tracerProvider.shutdown();
await meterProvider.shutdown();

/**
 * The two processes of trace-context.test.ts, run with `node --import tsx`, on one
 * store (`TW_STORE` `redis` or `postgres`; `TW_NS` its prefix or schema, `TW_REDIS_URL`,
 * `TW_DATABASE_URL`), each with OpenTelemetry set up as an app would (an async-hooks
 * context manager, an SDK tracer provider).
 *
 * - `TW_ROLE=executor`: registers `report` (one-off, far ahead) and `daily`
 *   (midnight), starts, and prints every finished span as a `span` line (name,
 *   trace and span IDs, attributes, links). SIGTERM: stop, close, exit 0.
 * - `TW_ROLE=caller`: never starts (so it cannot run anything); inside a span of
 *   its own it calls `trigger('report')` and `backfill('daily')` for two past days,
 *   prints the span as a `caller` line, and exits.
 *
 * Every line is JSON on stdout with `ev` and `pid`.
 */
import { context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { RedisStore } from '../../adapters/redis/index.js';
import { Scheduler } from '../../src/index.js';
// From source: the telemetry entry a Scheduler would otherwise load from dist/ by the package's name.
import '../../src/telemetry/index.js';

const env = process.env;
const log = (fields: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ ...fields, pid: process.pid })}\n`);

/** Prints each finished span: what a real exporter would send to a collector. */
const printer: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    for (const span of spans) {
      const { traceId, spanId } = span.spanContext();
      log({ ev: 'span', name: span.name, traceId, spanId, attributes: span.attributes, links: span.links.map((link) => link.context) });
    }
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: printer })] });
const store =
  env.TW_STORE === 'postgres'
    ? new PostgresStore({ connectionString: env.TW_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', schema: env.TW_NS ?? 'tickwork' })
    : new RedisStore({ url: env.TW_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: env.TW_NS ?? 'tickwork' });
const scheduler = new Scheduler({ store, telemetry: { tracerProvider } });
scheduler.on('error', (error) => log({ ev: 'error', message: error.message }));
scheduler.on('run:succeeded', ({ run }) => log({ ev: 'run:succeeded', runId: run.id }));

if (env.TW_ROLE === 'executor') {
  scheduler.register({ name: 'report', schedule: { at: '2100-01-01T00:00:00Z' }, handler: () => {} });
  scheduler.register({ name: 'daily', schedule: '0 0 * * *', handler: () => {} });
  await scheduler.start();
  log({ ev: 'ready' });
  process.once('SIGTERM', () => {
    void scheduler
      .stop()
      .then(() => store.close())
      .then(() => process.exit(0));
  });
} else {
  await tracerProvider.getTracer('app').startActiveSpan('POST /reports', async (span: Span) => {
    const run = await scheduler.trigger('report', { idempotencyKey: 'from-a' });
    await scheduler.backfill('daily', { from: '2025-12-30T00:00:00Z', to: '2025-12-31T00:00:00Z' });
    const { traceId, spanId } = span.spanContext();
    log({ ev: 'caller', traceId, spanId, runId: run.id });
    span.end();
  });
  await store.close();
}

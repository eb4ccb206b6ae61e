import { context, metrics, trace, SpanStatusCode, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, MetricReader, type HistogramMetricData, type MetricData, type SumMetricData } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler, ValidationError, type RunContext, type TelemetryOptions } from '../src/index.js';
import { RunAbortedError } from '../src/errors.js';
import { loadTelemetry } from '../src/telemetry/loader.js';
import { TELEMETRY_KEY } from '../src/telemetry/registry.js';
import { createTelemetry } from '../src/telemetry/telemetry.js';
import { formatTraceparent, parseTraceparent } from '../src/telemetry/trace-context.js';
import { FakeClock } from '../src/testing/index.js';
import { T0, harness, stopWhileAdvancing } from './helpers.js';

/** A reader the test collects from when it wants (no export interval). */
class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let reader: TestReader;
let telemetry: TelemetryOptions;

beforeAll(() => {
  // What an app's OpenTelemetry set-up (the Node SDK) registers: without it no context follows async calls.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => context.disable());
beforeEach(() => {
  exporter.reset();
  reader = new TestReader();
  telemetry = { tracerProvider, meterProvider: new MeterProvider({ readers: [reader] }) };
});

const runSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === 'tickwork.run');

async function collect(): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  return new Map(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]));
}

/** A sum's points as `attributes → value`, attributes rendered `k=v,...`. */
function sums(metric: MetricData | undefined): Record<string, number> {
  expect(metric?.dataPointType).toBe(DataPointType.SUM);
  const points = (metric as SumMetricData).dataPoints;
  return Object.fromEntries(points.map((point) => [Object.entries(point.attributes).map(([k, v]) => `${k}=${String(v)}`).join(','), point.value]));
}

function histogram(metric: MetricData | undefined): { count: number; sum: number | undefined; min: number | undefined; max: number | undefined } {
  expect(metric?.dataPointType).toBe(DataPointType.HISTOGRAM);
  const [point] = (metric as HistogramMetricData).dataPoints;
  return { count: point?.value.count ?? 0, sum: point?.value.sum, min: point?.value.min, max: point?.value.max };
}

describe('telemetry: spans', () => {
  it('one tickwork.run span per attempt, with the run attributes, ERROR and the exception on failure, in fake time', async () => {
    const { clock, scheduler } = harness({ telemetry });
    let calls = 0;
    scheduler.register({
      name: 'flaky',
      schedule: { at: '2026-01-01T00:00:05Z' },
      retry: { limit: 1, initialDelay: '10s' },
      handler: async () => {
        calls += 1;
        await clock.sleep('2s');
        if (calls === 1) throw new TypeError('first attempt fails');
      },
    });
    await scheduler.start();
    await clock.advance('1m');
    const spans = runSpans();
    expect(spans.map((span) => span.attributes)).toEqual([
      { 'tickwork.job.name': 'flaky', 'tickwork.run.id': 'flaky.1767225605', 'tickwork.run.attempt': 1, 'tickwork.run.trigger': 'schedule', 'tickwork.run.scheduled_at': '2026-01-01T00:00:05.000Z', 'tickwork.run.index': 0 },
      { 'tickwork.job.name': 'flaky', 'tickwork.run.id': 'flaky.1767225605', 'tickwork.run.attempt': 2, 'tickwork.run.trigger': 'schedule', 'tickwork.run.scheduled_at': '2026-01-01T00:00:05.000Z', 'tickwork.run.index': 0 },
    ]);
    const [failed, succeeded] = spans as [ReadableSpan, ReadableSpan];
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'first attempt fails' });
    expect(failed.events).toMatchObject([{ name: 'exception', attributes: { 'exception.type': 'TypeError', 'exception.message': 'first attempt fails' } }]);
    expect(succeeded.status.code).toBe(SpanStatusCode.UNSET);
    // Started at the tick and 2 s long, on the fake clock; the retry 10 s after the failure.
    expect(new Date(failed.startTime[0] * 1000).toISOString()).toBe('2026-01-01T00:00:05.000Z');
    expect(failed.duration).toEqual([2, 0]);
    expect(new Date(succeeded.startTime[0] * 1000).toISOString()).toBe('2026-01-01T00:00:17.000Z');
    expect(failed.spanContext().traceId).not.toBe(succeeded.spanContext().traceId);
    await scheduler.stop();
  });

  it('one span per index of a fan-out run', async () => {
    const { clock, scheduler } = harness({ telemetry });
    scheduler.register({ name: 'shards', schedule: { at: '2026-01-01T00:00:05Z' }, completions: 3, parallelism: 3, handler: () => clock.sleep('1s') });
    await scheduler.start();
    await clock.advance('10s');
    expect(runSpans().map((span) => span.attributes['tickwork.run.index']).sort()).toEqual([0, 1, 2]);
    await scheduler.stop();
  });

  it("is active in the handler's async context: the handler's own spans are its children; the run span is a root", async () => {
    const { clock, scheduler } = harness({ telemetry });
    const app = tracerProvider.getTracer('app');
    scheduler.register({
      name: 'traced',
      schedule: { at: '2026-01-01T00:00:05Z' },
      handler: async () => {
        await clock.sleep('1s');
        await app.startActiveSpan('query', async (span: Span) => {
          await Promise.resolve();
          span.end();
        });
      },
    });
    // Started inside an app span: the run must not become its child.
    await app.startActiveSpan('http-request', async (span: Span) => {
      await scheduler.start();
      span.end();
    });
    await clock.advance('10s');
    const [run] = runSpans();
    const query = exporter.getFinishedSpans().find((span) => span.name === 'query');
    expect(run?.parentSpanContext).toBeUndefined();
    expect(query?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
    expect(query?.spanContext().traceId).toBe(run?.spanContext().traceId);
    await scheduler.stop();
  });

  it('ends the span when the attempt is aborted (attempt timeout), as the executor sees it', async () => {
    const { clock, scheduler } = harness({ telemetry });
    scheduler.register({ name: 'stuck', schedule: { at: '2026-01-01T00:00:05Z' }, attemptTimeout: '3s', retry: false, handler: () => clock.sleep('1h') });
    await scheduler.start();
    await clock.advance('10s');
    const [span] = runSpans();
    expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'aborted: attempt-timeout' });
    expect(span?.duration).toEqual([3, 0]);
    await stopWhileAdvancing(scheduler, clock, '2h');
  });

  it("links a run's span to the traceparent its context carries (from the trigger() or backfill() that created it)", async () => {
    const clock = new FakeClock(T0);
    const tel = loadTelemetry(telemetry, clock);
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const ctx = { runId: 'r.manual.k', jobName: 'r', scheduledAt: new Date(T0), attempt: 1, index: 0, trigger: 'manual', signal: new AbortController().signal, traceparent: caller };
    await tel.wrap(() => undefined)(ctx as unknown as RunContext);
    const [span] = runSpans();
    expect(span?.links).toMatchObject([{ context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true } }]);
  });
});

describe('telemetry: trace context from trigger() and backfill()', () => {
  it("stores the caller's traceparent with a triggered run, whose span links to the caller's span", async () => {
    const { clock, store, scheduler } = harness({ telemetry });
    scheduler.register({ name: 'report', schedule: { at: '2027-01-01T00:00:00Z' }, handler: () => clock.sleep('1s') });
    await scheduler.start();
    const app = tracerProvider.getTracer('app');
    const caller = await app.startActiveSpan('POST /reports', async (span: Span) => {
      await scheduler.trigger('report', { idempotencyKey: 'k1' });
      span.end();
      return span.spanContext();
    });
    await scheduler.trigger('report', { idempotencyKey: 'k2' }); // outside any span: no link
    expect((await store.getRun('report.manual.k1'))?.traceparent).toBe(`00-${caller.traceId}-${caller.spanId}-01`);
    await clock.advance('5s');
    const spans = new Map(runSpans().map((span) => [span.attributes['tickwork.run.id'], span]));
    const linked = spans.get('report.manual.k1');
    expect(linked?.links).toMatchObject([{ context: { traceId: caller.traceId, spanId: caller.spanId, isRemote: true } }]);
    // A link, not a parent: the run's trace is its own.
    expect(linked?.parentSpanContext).toBeUndefined();
    expect(linked?.spanContext().traceId).not.toBe(caller.traceId);
    expect(spans.get('report.manual.k2')?.links).toEqual([]);
    await scheduler.stop();
  });

  it("stores the caller's traceparent with a backfill, and every run of it links to the caller's span", async () => {
    const { clock, store, scheduler } = harness({ telemetry });
    scheduler.register({ name: 'daily', schedule: '0 0 * * *', handler: () => {} });
    await scheduler.start();
    const caller = await tracerProvider.getTracer('app').startActiveSpan('backfill-december', async (span: Span) => {
      await scheduler.backfill('daily', { from: '2025-12-29T00:00:00Z', to: '2025-12-31T00:00:00Z' });
      span.end();
      return span.spanContext();
    });
    await clock.advance('10s');
    const spans = runSpans().filter((span) => span.attributes['tickwork.run.trigger'] === 'backfill');
    expect(spans.map((span) => span.attributes['tickwork.run.scheduled_at'])).toEqual(['2025-12-29T00:00:00.000Z', '2025-12-30T00:00:00.000Z', '2025-12-31T00:00:00.000Z']);
    for (const span of spans) expect(span.links).toMatchObject([{ context: { traceId: caller.traceId, spanId: caller.spanId } }]);
    expect((await store.listRuns({ jobName: 'daily', limit: 10 })).map((run) => run.traceparent)).toEqual(Array(3).fill(`00-${caller.traceId}-${caller.spanId}-01`));
    await scheduler.stop();
  });

  it('captures nothing when telemetry is off', async () => {
    const { store, scheduler } = harness();
    scheduler.register({ name: 'report', schedule: { at: '2027-01-01T00:00:00Z' }, handler: () => {} });
    await scheduler.start();
    await tracerProvider.getTracer('app').startActiveSpan('caller', async (span: Span) => {
      await scheduler.trigger('report', { idempotencyKey: 'k' });
      span.end();
    });
    expect(await store.getRun('report.manual.k')).not.toHaveProperty('traceparent');
    await scheduler.stop();
  });
});

describe('telemetry: metrics', () => {
  it('counts attempts started, runs finished by status, missed and skipped ticks; lag, duration and active handlers', async () => {
    const { clock, scheduler } = harness({ telemetry, logger: false });
    let active: Record<string, number> = {};
    scheduler.register({ name: 'ok', schedule: '*/10 * * * * *', handler: () => clock.sleep('1500ms') });
    scheduler.register({ name: 'bad', schedule: { at: '2026-01-01T00:00:05Z' }, retry: { limit: 1, initialDelay: '1s' }, handler: () => Promise.reject(new Error('no')) });
    scheduler.register({
      name: 'slow',
      schedule: '*/10 * * * * *',
      concurrencyPolicy: 'Forbid',
      handler: async () => {
        active = sums((await collect()).get('tickwork.runs.active'));
        await clock.sleep('15s');
      },
    });
    await scheduler.start();
    await clock.advance('35s'); // ok: 00:10, 00:20, 00:30; slow: 00:10 (15 s), 00:20 skipped, 00:30 running
    const metrics = await collect();
    expect(sums(metrics.get('tickwork.runs.started'))).toEqual({ 'tickwork.job.name=ok': 3, 'tickwork.job.name=bad': 2, 'tickwork.job.name=slow': 2 });
    expect(sums(metrics.get('tickwork.runs.finished'))).toEqual({
      'tickwork.job.name=ok,tickwork.run.status=succeeded': 3,
      'tickwork.job.name=bad,tickwork.run.status=failed': 1,
      'tickwork.job.name=slow,tickwork.run.status=succeeded': 1,
    });
    expect(sums(metrics.get('tickwork.ticks.skipped'))).toEqual({ 'tickwork.job.name=slow': 1 });
    expect(active['tickwork.job.name=slow']).toBe(1); // its own call, counted while it runs
    expect(sums(metrics.get('tickwork.runs.active'))).toMatchObject({ 'tickwork.job.name=ok': 0, 'tickwork.job.name=bad': 0, 'tickwork.job.name=slow': 1 });
    // Lag: each first attempt started at its tick on the fake clock. Duration: 3 calls of 1.5 s for `ok`.
    expect(histogram(metrics.get('tickwork.run.lag'))).toMatchObject({ max: 0 });
    const durations = (metrics.get('tickwork.run.duration') as HistogramMetricData).dataPoints.find((point) => point.attributes['tickwork.job.name'] === 'ok');
    expect(durations?.value).toMatchObject({ count: 3, sum: 4_500, min: 1_500, max: 1_500 });
    expect(metrics.get('tickwork.run.duration')?.descriptor.unit).toBe('ms');
    await stopWhileAdvancing(scheduler, clock);
  });

  it('counts missed tick ranges by reason', async () => {
    const clock = new FakeClock(T0);
    const { store, scheduler: before } = harness({ clock, logger: false });
    before.register({ name: 'm', schedule: '* * * * *', handler: () => {} });
    await before.start();
    await before.stop();
    await clock.advance('5m');
    const { scheduler } = harness({ clock, store, telemetry, logger: false });
    scheduler.register({ name: 'm', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    expect(sums((await collect()).get('tickwork.ticks.missed'))).toEqual({ 'tickwork.job.name=m,tickwork.tick.reason=coalesced': 1 });
    await scheduler.stop();
  });
});

describe('telemetry option', () => {
  it('true uses the global tracer and meter providers', async () => {
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(telemetry.meterProvider as MeterProvider);
    try {
      const { clock, scheduler } = harness({ telemetry: true });
      scheduler.register({ name: 'g', schedule: { at: '2026-01-01T00:00:01Z' }, handler: () => {} });
      await scheduler.start();
      await clock.advance('2s');
      expect(runSpans()).toHaveLength(1);
      expect(sums((await collect()).get('tickwork.runs.started'))).toEqual({ 'tickwork.job.name=g': 1 });
      await scheduler.stop();
    } finally {
      trace.disable();
      metrics.disable();
    }
  });

  it('is validated', () => {
    expect(() => new Scheduler({ telemetry: 'yes' as unknown as boolean })).toThrow(ValidationError);
    expect(() => new Scheduler({ telemetry: { tracerProvider: {} } as unknown as TelemetryOptions })).toThrow(/telemetry: must be true, false, or \{ tracerProvider\?, meterProvider\? \}/);
    expect(() => new Scheduler({ telemetry: { meterProvider: metrics.getMeterProvider(), extra: 1 } as unknown as TelemetryOptions })).toThrow(ValidationError);
  });
});

describe('telemetry: loading the tickwork/telemetry entry', () => {
  const registry = globalThis as unknown as Record<symbol, unknown>;
  const key = Symbol.for(TELEMETRY_KEY);

  it('uses the entry an import registered (test/setup/telemetry.ts: the source)', () => {
    expect(registry[key]).toBe(createTelemetry);
    const registered = registry[key];
    let used = 0;
    registry[key] = (...args: Parameters<typeof createTelemetry>) => ((used += 1), createTelemetry(...args));
    try {
      new Scheduler({ telemetry, clock: new FakeClock(T0) });
      expect(used).toBe(1);
    } finally {
      registry[key] = registered;
    }
  });

  it("else loads the installed package's entry by name (here dist/, a second copy), handing it the core's RunAbortedError", async () => {
    const registered = registry[key];
    delete registry[key];
    // A fresh load: the entry registers itself when it is evaluated, once per process.
    const require = createRequire(import.meta.url);
    delete require.cache[require.resolve('tickwork/telemetry')];
    try {
      const tel = loadTelemetry(telemetry, new FakeClock(T0));
      expect(registry[key]).not.toBe(createTelemetry); // dist/telemetry.cjs registered itself
      expect(registry[key]).toBeTypeOf('function');
      const controller = new AbortController();
      const ctx = { runId: 'd.manual.k', jobName: 'd', scheduledAt: new Date(T0), attempt: 1, index: 0, trigger: 'manual', signal: controller.signal };
      const pending = tel.wrap(() => new Promise(() => {}))(ctx as unknown as RunContext);
      controller.abort(new RunAbortedError('d.manual.k', 'attempt-timeout'));
      expect(pending).toBeInstanceOf(Promise);
      const [span] = runSpans();
      expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'aborted: attempt-timeout' });
    } finally {
      registry[key] = registered;
    }
  });
});

describe('trace context', () => {
  it("captures the caller's active span as a W3C traceparent, and nothing outside a span", () => {
    const tel = loadTelemetry(telemetry, new FakeClock(T0));
    expect(tel.captureTraceparent()).toBeUndefined();
    tracerProvider.getTracer('app').startActiveSpan('caller', (span: Span) => {
      const { traceId, spanId } = span.spanContext();
      expect(tel.captureTraceparent()).toBe(`00-${traceId}-${spanId}-01`);
      span.end();
    });
  });

  it('formats and parses traceparent, rejecting invalid and all-zero ones', () => {
    const context = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    expect(formatTraceparent(context)).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual(context);
    expect(parseTraceparent(' 00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00 ')).toEqual({ ...context, traceFlags: 0 });
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later')).toEqual(context); // a future version's extra field
    for (const bad of ['', 'garbage', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
    expect(formatTraceparent({ ...context, traceId: '0'.repeat(32) })).toBeUndefined();
  });
});

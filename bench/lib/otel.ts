/**
 * OpenTelemetry set up as an app's SDK set-up does, for tickwork's `telemetry` option in
 * the fire-lag scenario (`--lib tickwork-otel`): the async-hooks context manager, an SDK
 * tracer provider with a batch span processor, and an SDK meter provider with a reader.
 * Nothing leaves the process: the span exporter drops what it is given, and the reader
 * is never collected (the SDK still aggregates every measurement as it is recorded).
 * What the scenario measures is tickwork's instrumentation and the SDK's work per fire,
 * not a network exporter's.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';

class HeldReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};

export interface BenchTelemetry {
  readonly tracerProvider: TracerProvider;
  readonly meterProvider: MeterProvider;
  readonly shutdown: () => Promise<void>;
}

export function benchTelemetry(): BenchTelemetry {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: dropping })] });
  const meterProvider = new MeterProvider({ readers: [new HeldReader()] });
  return {
    tracerProvider,
    meterProvider,
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

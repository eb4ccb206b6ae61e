/**
 * OpenTelemetry for the scheduler, through the optional peer `@opentelemetry/api`
 * (loaded only when the `telemetry` option asks for it): a `tickwork.run` span
 * around every handler call (each attempt, each fan-out index), active in the
 * handler's async context so the handler's own spans are its children, and the
 * scheduler's metrics. Spans and durations are timed on the scheduler's clock, so
 * under a `FakeClock` they are in fake time, like the runs they describe.
 *
 * This module is the `tickwork/telemetry` entry's (index.ts), not the core's: a
 * `Scheduler` loads it at run time when `telemetry` is set (loader.ts), so that an app
 * without telemetry does not carry it (4 KB of a bundled app). It may then be a second
 * copy next to the app's tickwork (the CommonJS build next to the ES one, or the
 * installed package next to a bundle), so it imports nothing of the core at run time:
 * what it needs that has an identity (the `@opentelemetry/api` the core loaded,
 * `RunAbortedError` for `instanceof`) or that the core owns (the clock, the jitter
 * rule) is handed to it (`TelemetryDeps`).
 */
import type * as OTel from '@opentelemetry/api';
import type { EventEmitter } from 'eventemitter3';
import type { Clock } from '../clock.js';
import type { RunAbortedError } from '../errors.js';
import type { SchedulerEvents } from '../events.js';
import type { JobHandler, RunContext } from '../types.js';
import { formatTraceparent, parseTraceparent } from './trace-context.js';

/** Anything with `getTracer`: an OpenTelemetry `TracerProvider` (typed structurally, so tickwork's types need no OTel package). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string, options?: object): unknown;
}

/** Anything with `getMeter`: an OpenTelemetry `MeterProvider`. */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: object): unknown;
}

/**
 * The `telemetry` option of `new Scheduler()`: `true` for the global providers, or
 * the providers to use (either omitted: the global one).
 */
export interface TelemetryOptions {
  readonly tracerProvider?: TracerProviderLike;
  readonly meterProvider?: MeterProviderLike;
}

/** The instrumentation scope of tickwork's tracer and meter. */
export const INSTRUMENTATION_NAME = 'tickwork';
export const RUN_SPAN = 'tickwork.run';

/** Attribute names (SPEC §10). */
export const ATTR = {
  jobName: 'tickwork.job.name',
  runId: 'tickwork.run.id',
  attempt: 'tickwork.run.attempt',
  trigger: 'tickwork.run.trigger',
  scheduledAt: 'tickwork.run.scheduled_at',
  index: 'tickwork.run.index',
  status: 'tickwork.run.status',
  tickReason: 'tickwork.tick.reason',
} as const;

/**
 * A handler's context that may carry the W3C `traceparent` of the `trigger()` or
 * `backfill()` call that created its run: the run's span links to it.
 */
export interface TracedRunContext extends RunContext {
  readonly traceparent?: string;
}

/** What the core hands the telemetry module (see above). */
export interface TelemetryDeps {
  /** The `@opentelemetry/api` module (typed loosely: tickwork's declarations must not need the OTel package). */
  readonly api: object;
  readonly clock: Clock;
  /** planner.ts's rule: when a jittered scheduled run became ready. */
  readonly jitteredReadyAt: (runId: string, tick: number, jitterMs: number) => number;
  readonly RunAbortedError: typeof RunAbortedError;
}

/** What the scheduler calls on its telemetry. */
export interface TelemetryHooks {
  wrap(handler: JobHandler, jitterMs?: number): JobHandler;
  observe(events: EventEmitter<SchedulerEvents>): void;
  captureTraceparent(): string | undefined;
}

/** What the `tickwork/telemetry` entry exports and registers (registry.ts). */
export type CreateTelemetry = (option: true | TelemetryOptions, deps: TelemetryDeps) => TelemetryHooks;

export const createTelemetry: CreateTelemetry = (option, deps) => new Telemetry(option, deps);

export class Telemetry implements TelemetryHooks {
  readonly #api: typeof OTel;
  readonly #clock: Clock;
  readonly #deps: TelemetryDeps;
  readonly #tracer: OTel.Tracer;
  readonly #started: OTel.Counter;
  readonly #finished: OTel.Counter;
  readonly #missed: OTel.Counter;
  readonly #skipped: OTel.Counter;
  readonly #lag: OTel.Histogram;
  readonly #duration: OTel.Histogram;
  readonly #active: OTel.UpDownCounter;
  /** `{ tickwork.job.name }` per job: the attributes of most measurements, built once. */
  readonly #jobAttributes = new Map<string, OTel.Attributes>();

  /** Creates the instruments, through the `@opentelemetry/api` the core loaded. */
  constructor(option: true | TelemetryOptions, deps: TelemetryDeps) {
    const api = deps.api as typeof OTel;
    const given = option === true ? {} : option;
    const tracerProvider = (given.tracerProvider ?? api.trace.getTracerProvider()) as OTel.TracerProvider;
    const meterProvider = (given.meterProvider ?? api.metrics.getMeterProvider()) as OTel.MeterProvider;
    this.#api = api;
    this.#clock = deps.clock;
    this.#deps = deps;
    this.#tracer = tracerProvider.getTracer(INSTRUMENTATION_NAME);
    const meter = meterProvider.getMeter(INSTRUMENTATION_NAME);
    this.#started = meter.createCounter('tickwork.runs.started', { unit: '{attempt}', description: 'Handler calls started: one per attempt of a run (per index of a fan-out run)' });
    this.#finished = meter.createCounter('tickwork.runs.finished', { unit: '{run}', description: 'Runs that ended, by tickwork.run.status (succeeded, failed, cancelled)' });
    this.#missed = meter.createCounter('tickwork.ticks.missed', { unit: '{range}', description: 'Ranges of missed ticks reported (tick:missed), by tickwork.tick.reason' });
    this.#skipped = meter.createCounter('tickwork.ticks.skipped', { unit: '{tick}', description: 'Ticks skipped because a run was active (Forbid)' });
    this.#lag = meter.createHistogram('tickwork.run.lag', { unit: 'ms', description: "From a run's nominal time to its handler's start (first attempts of scheduled and manual runs)" });
    this.#duration = meter.createHistogram('tickwork.run.duration', { unit: 'ms', description: "A handler call's duration, until it settled or was aborted" });
    this.#active = meter.createUpDownCounter('tickwork.runs.active', { unit: '{attempt}', description: 'Handler calls running now on this instance' });
  }

  /**
   * `handler`, called inside a `tickwork.run` span of its own and measured. `jitterMs`:
   * the job's jitter, so that lag counts from when a scheduled run became ready.
   */
  wrap(handler: JobHandler, jitterMs?: number): JobHandler {
    return (ctx) => this.#call(handler, ctx as TracedRunContext, jitterMs);
  }

  /** Counts what the scheduler reports as events: runs that ended, missed and skipped ticks. */
  observe(events: EventEmitter<SchedulerEvents>): void {
    const finished = (status: string) => (event: { run: { jobName: string } }) =>
      this.#finished.add(1, { [ATTR.jobName]: event.run.jobName, [ATTR.status]: status });
    events.on('run:succeeded', finished('succeeded'));
    events.on('run:failed', finished('failed'));
    events.on('run:cancelled', finished('cancelled'));
    events.on('tick:missed', ({ jobName, reason }) => this.#missed.add(1, { [ATTR.jobName]: jobName, [ATTR.tickReason]: reason }));
    events.on('tick:skipped', ({ jobName }) => this.#skipped.add(1, this.#attributes(jobName)));
  }

  /**
   * The caller's active trace context as a W3C `traceparent`, to be stored with the
   * run it creates; undefined outside a (valid) span.
   */
  captureTraceparent(): string | undefined {
    const api = this.#api;
    const context = api.trace.getSpanContext(api.context.active());
    return context === undefined || !api.isSpanContextValid(context) ? undefined : formatTraceparent(context);
  }

  #call(handler: JobHandler, ctx: TracedRunContext, jitterMs: number | undefined): unknown {
    const api = this.#api;
    const start = this.#clock.now();
    const attributes = this.#attributes(ctx.jobName);
    const link = ctx.traceparent === undefined ? undefined : parseTraceparent(ctx.traceparent);
    // A root span: the executor's async context belongs to whichever call happened to wake it, not to this run.
    const span = this.#tracer.startSpan(
      RUN_SPAN,
      {
        kind: api.SpanKind.CONSUMER,
        startTime: start,
        attributes: {
          [ATTR.jobName]: ctx.jobName,
          [ATTR.runId]: ctx.runId,
          [ATTR.attempt]: ctx.attempt,
          [ATTR.trigger]: ctx.trigger,
          [ATTR.scheduledAt]: ctx.scheduledAt.toISOString(),
          [ATTR.index]: ctx.index,
        },
        ...(link === undefined ? {} : { links: [{ context: { ...link, isRemote: true } }] }),
      },
      api.ROOT_CONTEXT,
    );
    this.#started.add(1, attributes);
    this.#active.add(1, attributes);
    // Lag is the scheduler's: a retry's wait is the backoff, and a backfill's nominal time is history.
    // A jittered scheduled run is due at its ready time, not its tick.
    if (ctx.attempt === 1 && ctx.trigger !== 'backfill') {
      const tick = ctx.scheduledAt.getTime();
      const readyAt = jitterMs === undefined || ctx.trigger !== 'schedule' ? tick : this.#deps.jitteredReadyAt(ctx.runId, tick, jitterMs);
      this.#lag.record(Math.max(0, start - readyAt), attributes);
    }

    let ended = false;
    const end = (failure?: { error: unknown; aborted?: string }): void => {
      if (ended) return;
      ended = true;
      ctx.signal.removeEventListener('abort', onAbort);
      if (failure !== undefined) {
        span.recordException(toException(failure.error));
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure.aborted === undefined ? messageOf(failure.error) : `aborted: ${failure.aborted}` });
      }
      const now = this.#clock.now();
      span.end(now);
      this.#duration.record(now - start, attributes);
      this.#active.add(-1, attributes);
    };
    // The attempt ends at an abort, as the executor sees it, whatever the handler does next; a
    // shutdown waits for the handler to settle (its run is then released or recorded).
    const onAbort = (): void => {
      const reason: unknown = ctx.signal.reason;
      const why = reason instanceof this.#deps.RunAbortedError ? reason.reason : 'aborted';
      if (why !== 'shutdown') end({ error: reason, aborted: why });
    };
    ctx.signal.addEventListener('abort', onAbort);

    let result: unknown;
    try {
      result = api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), handler, undefined, ctx);
    } catch (error) {
      end({ error });
      throw error;
    }
    if (!isThenable(result)) {
      end();
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        end();
        return value;
      },
      (error: unknown) => {
        end({ error });
        throw error;
      },
    );
  }

  #attributes(jobName: string): OTel.Attributes {
    let attributes = this.#jobAttributes.get(jobName);
    if (attributes === undefined) {
      attributes = Object.freeze({ [ATTR.jobName]: jobName });
      this.#jobAttributes.set(jobName, attributes);
    }
    return attributes;
  }
}

function toException(error: unknown): OTel.Exception {
  return error instanceof Error ? error : String(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

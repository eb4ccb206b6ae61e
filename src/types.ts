/**
 * The public types of the scheduler API, written by hand with their docs. The zod
 * schemas in `options.ts` are checked against these.
 */
import type { Clock } from './clock.js';
import type { Duration } from './duration.js';
import type { AbortReason } from './errors.js';
import type { Logger } from './logging.js';
import type { ConcurrencyPolicy, JsonValue, Lock, RunStatus, RunTrigger, Store } from './store.js';
import type { TelemetryOptions } from './telemetry/telemetry.js';

export type { ConcurrencyPolicy, JsonValue, RunStatus, RunTrigger } from './store.js';
export type { Duration, DurationString, DurationUnit } from './duration.js';

/**
 * An instant: a `Date`, milliseconds since the epoch (a fraction is truncated), or an
 * ISO-8601 string (`2026-06-01`, or a date and time with `Z` or an offset, such as
 * `2026-06-01T09:30:00+02:00`; impossible dates and times without an offset are
 * refused), within the `Date` range.
 */
export type Instant = Date | string | number;

/**
 * When a job runs:
 * - a cron string, 5 fields (minutes) or 6 (leading seconds), or a macro such as `@daily`;
 * - `{ at }`: once, at that instant;
 * - `{ every, anchor? }`: at `anchor + k·every` (anchor: the job's creation time, to the second).
 */
export type ScheduleInput = string | { readonly at: Instant } | { readonly every: Duration; readonly anchor?: Instant };

export interface RetryOptions {
  /** Retries after the first failed attempt. @default 6 */
  readonly limit?: number;
  /** Wait before the first retry. @default '10s' */
  readonly initialDelay?: Duration;
  /** Each retry waits `factor` times the previous one. @default 2 */
  readonly factor?: number;
  /** Upper bound of one wait. @default '1h' */
  readonly maxDelay?: Duration;
  /** Spreads each wait by ±`jitter`·wait (0..1), deterministically per run and attempt. @default 0 */
  readonly jitter?: number;
}

export interface HistoryOptions {
  /** Succeeded runs kept per job. @default 3 */
  readonly succeeded?: number;
  /** Failed or cancelled runs kept per job. @default 1 */
  readonly failed?: number;
  /** Finished runs are deleted this long after they finished, whatever the counts above. @default none */
  readonly ttl?: Duration;
}

/** The window of data a scheduled run covers: from the previous tick to its own. */
export interface RunInterval {
  readonly start: Date;
  readonly end: Date;
}

/** What a handler receives. */
export interface RunContext<Data = JsonValue> {
  /** Deterministic: `${job}.${unixSeconds(scheduledAt)}`, `${job}.manual.${key}` or `${job}.backfill.${unixSeconds}`. */
  readonly runId: string;
  readonly jobName: string;
  /** The planned (nominal) time of the run, not the time it started. */
  readonly scheduledAt: Date;
  /** From the schedule's tick before `scheduledAt` to `scheduledAt`; undefined for one-offs and manual runs. */
  readonly interval: RunInterval | undefined;
  /** 1 for the first attempt, 2 for the first retry, ... (of this index, in a fan-out run). */
  readonly attempt: number;
  /** Which part of a fan-out run this call handles: 0 to `completions − 1` (0 for a plain run). */
  readonly index: number;
  /** The job's `completions` when the run was created (1 for a plain run). */
  readonly completions: number;
  readonly trigger: RunTrigger;
  /**
   * Aborted on Replace, timeout, lost lease and `stop({ abort: true })`; `signal.reason` is a `RunAbortedError`.
   * Built on first read (a getter, so handlers that never read it pay nothing); copying
   * the context with a spread leaves it out: pass `ctx.signal` itself.
   */
  readonly signal: AbortSignal;
  /** The manual trigger's `data` (`null` included) if it gave any, the job's otherwise: a copy of its own, free to change. */
  readonly data: Data | undefined;
}

export type JobHandler<Data = JsonValue> = (ctx: RunContext<Data>) => unknown;

/**
 * `T` as JSON sees it: primitives and arrays as they are, an object (an `interface`
 * without an index signature included) property by property, and `never` for what
 * JSON cannot hold (a `Date`, a function, `undefined` values, a class with methods).
 */
export type JsonCompatible<T> = T extends string | number | boolean | null
  ? T
  : T extends (...args: never[]) => unknown
    ? never
    : T extends object
      ? { [K in keyof T]: JsonCompatible<T[K]> }
      : never;

/**
 * What `register()` and `trigger()` add to their input's type to accept only
 * JSON-compatible `data`: nothing when `Data` is, and a `data` it cannot match (so
 * the compiler names the property that is not JSON) when it is not.
 */
export type JsonData<Data> = [Data] extends [JsonValue]
  ? unknown
  : [Data] extends [JsonCompatible<Data>]
    ? unknown
    : { readonly data?: JsonCompatible<Data> };

/**
 * A job. `Data` is the type of its `data`, inferred from it or from the handler's
 * `ctx` annotation: any JSON-compatible type, an `interface` without an index
 * signature included (`register()` refuses, at compile time, data JSON cannot hold).
 */
export interface JobDefinition<Data = JsonValue> {
  /**
   * Unique per store: letters, digits, `-`, `_`, `.`; 1 to 200 characters; no
   * dot-separated part may be `manual` or `backfill` (they mark manual and backfill
   * run IDs, which would otherwise collide with another job's).
   */
  readonly name: string;
  readonly schedule: ScheduleInput;
  /** IANA time zone the cron fields are read in. @default 'UTC' */
  readonly timezone?: string;
  /**
   * What a due tick does while a run of the job is active (see the README's "Which
   * ticks run"). `BufferOne`: as `Forbid`, but the latest such tick waits (one at
   * most; a later one replaces it, the replaced one reported missed) and runs as soon
   * as the active run finishes. @default 'Allow'
   */
  readonly concurrencyPolicy?: ConcurrencyPolicy;
  /**
   * No tick before this instant becomes a run. Changing it on re-registration applies
   * to ticks after the cursor only. @default no start
   */
  readonly startAt?: Instant;
  /**
   * No tick after this instant (inclusive bound) becomes a run; once the last tick
   * of the window is dealt with the job is finished (`nextRunAt` undefined,
   * `finished: true`). At or after `startAt`. @default no end
   */
  readonly endAt?: Instant;
  /**
   * Each scheduled run becomes ready at its tick plus a delay in `[0, jitter)`,
   * derived from the run ID (every instance agrees; planning again does not move it).
   * `scheduledAt`, the run ID and `interval` stay nominal; the pending timeout counts
   * from the ready time. Spreads jobs that share a tick. @default 0
   */
  readonly jitter?: Duration;
  /**
   * After this many scheduled runs the job is finished. Counted by the store with the
   * cursor (across instances and restarts); manual and backfill runs do not count.
   * @default no limit
   */
  readonly maxRuns?: number;
  /** A due tick older than `now − startingDeadline` when its run would be created is missed. */
  readonly startingDeadline?: Duration;
  /**
   * Sets the shared suspend flag on every registration. Omit it to leave the flag to
   * `pause()`/`resume()` (a new job starts active). Suspending this way cancels a run
   * created ahead of a tick still to come, as `pause()` does.
   */
  readonly suspend?: boolean;
  /** Retry policy; `false` means no retries. */
  readonly retry?: RetryOptions | false;
  /** Deadline of the whole run, over all attempts. */
  readonly timeout?: Duration;
  /** Deadline of one attempt; a timed-out attempt is retried. */
  readonly attemptTimeout?: Duration;
  /**
   * A run (or a fan-out index) that no instance starts within this time of becoming
   * ready fails with a `PendingTimeoutError` (`run:failed`, reason `'pending-timeout'`),
   * for example when no live instance has registered the job. @default wait forever
   */
  readonly pendingTimeout?: Duration;
  /**
   * Fan-out: each run calls the handler once per index `0..completions−1`
   * (`ctx.index`), and succeeds when every index has. `retry.limit` counts failed
   * attempts over the whole run, `timeout` covers the whole run. 1 to 10,000. @default 1
   */
  readonly completions?: number;
  /** Fan-out: at most this many indices of a run running at once, across all instances (capped at `completions`). @default 1 */
  readonly parallelism?: number;
  readonly history?: HistoryOptions;
  /**
   * JSON handed to every run (manual triggers may override it), at most 64 levels
   * deep. Copied at `register()`; each handler call gets a copy of its own.
   */
  readonly data?: Data;
  readonly handler: JobHandler<Data>;
}

export interface SchedulerOptions {
  /** @default new MemoryStore() */
  readonly store?: Store;
  /** Its `now()` must return epoch milliseconds; a fraction is floored before it reaches a store. @default systemClock */
  readonly clock?: Clock;
  /** @default a unique ID per scheduler */
  readonly instanceId?: string;
  /** Handlers running at once in this process. @default Infinity */
  readonly maxConcurrentRuns?: number;
  /** How long a run's owner (or the planner) may be silent before others take over: whole ms, 100 ms to 100 years. @default 30_000 */
  readonly leaseMs?: number;
  /** Planner election. @default the store's own lock */
  readonly lock?: Lock;
  /**
   * Where the scheduler logs (store unreachable and recovered, planner elected or lost,
   * runs recovered or failed, ticks missed, ...): any object with `error`, `warn`,
   * `info` and `debug` methods called as `(fields, message)`, e.g. a pino logger.
   * `false`: no logging.
   * @default errors and warnings to stderr, one line each, unless an `error` listener is attached
   */
  readonly logger?: Logger | false;
  /**
   * OpenTelemetry through `@opentelemetry/api` (an optional peer dependency, loaded
   * only when this is set): a `tickwork.run` span per handler call and the
   * `tickwork.*` metrics. `true` uses the global tracer and meter providers.
   * @default false
   */
  readonly telemetry?: boolean | TelemetryOptions;
}

export interface StopOptions {
  /**
   * Abort running handlers at once (reason `'shutdown'`); their runs are released for
   * another instance. A handler gets `SHUTDOWN_GRACE_MS` (5 s) to settle after its
   * signal aborts; then its run is released anyway and `stop()` goes on.
   * @default false
   */
  readonly abort?: boolean;
  /**
   * Wait at most this long for running handlers, then abort them as `abort: true`
   * does: `stop()` resolves within `timeout` + 5 s whatever the handlers do.
   * Without it (and without `abort`), `stop()` waits for handlers to finish.
   * @example await scheduler.stop({ timeout: '20s' })
   */
  readonly timeout?: Duration;
}

export interface TriggerOptions<Data = JsonValue> {
  /** JSON for this run instead of the job's `data` (`null` is a value: the run gets `null`). Copied at the call. */
  readonly data?: Data;
  /** A repeated trigger with the same key creates nothing new. */
  readonly idempotencyKey?: string;
}

export interface BackfillOptions {
  readonly from: Instant;
  readonly to: Instant;
}

/**
 * A page of `listJobs()`: jobs by name, after `after`, at most `limit` of them.
 * @example
 * // Every job, a page at a time: each page is one store read of `limit` jobs.
 * for (let page = await scheduler.listJobs({ limit: 500 }); page.length > 0; page = await scheduler.listJobs({ limit: 500, after: page.at(-1)!.name })) {
 *   for (const job of page) console.log(job.name, job.nextRunAt);
 * }
 */
export interface ListJobsOptions {
  /** Only jobs whose name comes after this one (code-point order): the last name of the previous page. */
  readonly after?: string;
  /** At most this many jobs (1 to 10,000). Without it, every job after `after`. */
  readonly limit?: number;
}

export interface ListRunsOptions {
  readonly status?: RunStatus | readonly RunStatus[];
  /** @default 100 */
  readonly limit?: number;
}

/** A job as the store knows it. */
export interface JobInfo {
  readonly name: string;
  /** The cron expression, or `{ at }` / `{ every, anchor }` in milliseconds. */
  readonly schedule: string | { readonly at: Date } | { readonly every: number; readonly anchor: Date };
  readonly timezone: string;
  readonly concurrencyPolicy: ConcurrencyPolicy;
  readonly suspended: boolean;
  readonly createdAt: Date;
  /** The planning cursor: the latest tick dealt with (run, skipped or missed). */
  readonly lastScheduleTime?: Date;
  readonly lastSuccessfulTime?: Date;
  /** The next tick after the cursor; undefined when the job is finished. */
  readonly nextRunAt?: Date;
  /**
   * True when no tick is left to run: a one-off that ran, a window past its `endAt`, or
   * `maxRuns` reached (a run created ahead of its tick still to come counts as left).
   */
  readonly finished: boolean;
  /** Scheduled runs created over the job's life (what `maxRuns` counts). */
  readonly scheduledRuns: number;
  readonly startAt?: Date;
  readonly endAt?: Date;
  /** The job's jitter in milliseconds, when it has one. */
  readonly jitterMs?: number;
  readonly maxRuns?: number;
  /** IDs of pending and running runs. */
  readonly active: readonly string[];
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
}

/** A run as the store knows it; `Data` is its job's data type (see `Scheduler`). */
export interface RunInfo<Data = JsonValue> {
  readonly id: string;
  readonly jobName: string;
  readonly scheduledAt: Date;
  readonly trigger: RunTrigger;
  readonly status: RunStatus;
  readonly attempt: number;
  readonly createdAt: Date;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
  readonly error?: { readonly name: string; readonly message: string };
  /** When a pending run may start (its next retry). */
  readonly readyAt: Date;
  /** A manual trigger's `data` (absent: the run uses its job's). */
  readonly data?: Data;
  /** Fan-out runs only: indices succeeded and running, and failed attempts over the whole run. */
  readonly completions?: CompletionsInfo;
}

export interface CompletionsInfo {
  /** The run's `completions` and `parallelism`, fixed when it was created. */
  readonly total: number;
  readonly parallelism: number;
  readonly succeeded: number;
  /** Failed index attempts so far (lost leases included). */
  readonly failed: number;
  /** Indices running now. */
  readonly active: number;
}

export type { AbortReason };

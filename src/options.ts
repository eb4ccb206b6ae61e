/**
 * zod schemas for every public input, and their normalized forms: durations and
 * instants in whole milliseconds (see duration.ts and instant.ts: no fraction ever
 * reaches a store), schedules in their stored shape, `data` as a private frozen
 * copy (json-value.ts). `parseInput` turns a failed parse into a `ValidationError`
 * naming field and value. Written with zod/mini, whose functions a bundler keeps
 * only when used (zod's chained API brings all of itself and every locale: 443 KB
 * of a minimal app).
 */
import { MAX_PARTITIONS } from './partition.js';
import * as z from 'zod/mini';
import type { Clock } from './clock.js';
import type { Draft } from './draft.js';
import { DURATION_FORMS, MAX_DURATION_MS, parseDuration } from './duration.js';
import { ValidationError, describeValue, messageOf } from './errors.js';
import { readInstant } from './instant.js';
import { copyJsonValue } from './json-value.js';
import { NAME_PATTERN, RESERVED_NAME_SEGMENTS, reservedSegmentOf } from './run-id.js';
import { cronProblem, cronSpec, isValidTimeZone } from './schedule/index.js';
import type { ConcurrencyPolicy, FanOutSpec, HistoryLimits, JsonValue, Lock, RunStatus, ScheduleSpec, Store } from './store.js';
import type { JobDefinition, JobHandler, SchedulerOptions } from './types.js';
import { integer, integerSchema, parseInput, safeParse, strictObject } from './validation.js';

const MIN_EVERY_MS = 1_000;

/** Reports a problem found by a transform (`path` relative to the transformed value), which then yields no value. */
function fail(payload: z.core.ParsePayload, message: string, path: PropertyKey[] = []): never {
  payload.issues.push({ code: 'custom', message, path, input: payload.value });
  return z.NEVER;
}

/**
 * Any name a store may hold, names an earlier grammar allowed included: what looking
 * a job up, pausing or removing it takes. Also the grammar of idempotency keys.
 */
export const storedNameSchema = z
  .string({ error: 'must be a string' })
  .check(z.refine((name) => NAME_PATTERN.test(name), 'must be 1 to 200 letters, digits, "-", "_" or "."'));

/** A job name under the current grammar, which keeps run IDs unambiguous (run-id.ts): what creates runs takes. */
export const nameSchema = storedNameSchema.check(
  z.refine((name) => reservedSegmentOf(name) === undefined, {
    error: `must not have ${RESERVED_NAME_SEGMENTS.map((segment) => `"${segment}"`).join(' or ')} as a dot-separated part (run IDs use them)`,
  }),
);

/**
 * A finite number: what `z.number()` accepts. The schemas below check the type of their
 * input in their transform, rather than through `z.union` and `z.pipe`, so that a
 * bundled app carries none of those (1 KB with `z.date()`), with the same messages.
 */
function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function durationSchema(min = 0) {
  return z.transform((value: unknown, payload) => {
    if (typeof value !== 'string' && !isFiniteNumber(value)) return fail(payload, `must be a duration: ${DURATION_FORMS}`);
    const ms = parseDuration(value);
    // Text that is no duration at all is told the forms; a duration out of range is told the range.
    if (ms === undefined && typeof value === 'string' && parseDuration(value.replace(/^-/, '')) === undefined) {
      return fail(payload, `is not a duration: use ${DURATION_FORMS}`);
    }
    if (ms === undefined || ms < min) {
      return fail(payload, `must be a duration from ${min} ms to 100 years (${min === 0 ? 'not negative' : `at least ${min} ms`})`);
    }
    return ms;
  });
}

export const instantSchema = z.transform((value: unknown, payload) => {
  const valid = (value instanceof Date && !Number.isNaN(value.getTime())) || typeof value === 'string' || isFiniteNumber(value);
  if (!valid) return fail(payload, 'must be a Date, an ISO-8601 string or epoch milliseconds');
  const reading = readInstant(value);
  return 'problem' in reading ? fail(payload, reading.problem) : reading.ms;
});

/**
 * Picks the schema for a value by its shape and parses with it, keeping the inner
 * field paths in the issues (a plain `z.union` reports only "Invalid input" at the union).
 */
function byShape<T>(pick: (value: unknown) => z.ZodMiniType<T> | undefined, message: string) {
  return z.transform((value: unknown, payload): T => {
    const schema = pick(value);
    if (schema === undefined) return fail(payload, message);
    const result = safeParse(schema, value);
    if (result.success) return result.data;
    for (const issue of result.issues) fail(payload, issue.message, issue.path);
    return z.NEVER;
  });
}

/**
 * Any JSON value, as a frozen copy of its own; anything else (a Date, a function,
 * NaN, a class instance, a cycle, nesting beyond `MAX_DATA_DEPTH`) is reported at
 * its exact path.
 */
const jsonSchema = z.transform((value: unknown, payload): JsonValue => {
  const copy = copyJsonValue(value);
  return 'problem' in copy ? fail(payload, copy.problem.message, [...copy.problem.path]) : copy.value;
});

/**
 * Exactly one of `values`: `z.enum`'s rule as a `z.custom` check, with the message given
 * (`z.enum` and `z.literal` would add 1 KB to a bundled app for these three uses).
 */
function oneOf<const T>(values: readonly T[], error: string) {
  return z.custom<T>((value) => values.includes(value as T), error);
}

const policySchema = oneOf(['Allow', 'Forbid', 'Replace', 'CatchUp', 'BufferOne'], 'must be "Allow", "Forbid", "Replace", "CatchUp" or "BufferOne"');

const countSchema = integerSchema(0);
export const maxRunsSchema = integerSchema(1);
/** Indices of a fan-out run: enough for any sharding, small enough that one run's records stay cheap. */
const MAX_COMPLETIONS = 10_000;
const indexCountSchema = integerSchema(1, MAX_COMPLETIONS);

const retrySchema = strictObject({
  limit: z._default(countSchema, 6),
  initialDelay: z._default(durationSchema(), 10_000),
  factor: z._default(z.number().check(z.gte(1, 'must be 1 or more')), 2),
  maxDelay: z._default(durationSchema(), 3_600_000),
  jitter: z._default(z.number().check(z.gte(0, 'must be between 0 and 1'), z.lte(1, 'must be between 0 and 1')), 0),
});

const atSchema = strictObject({ at: instantSchema });
const everySchema = strictObject({ every: durationSchema(MIN_EVERY_MS), anchor: z.optional(instantSchema) });

// Built once: a schema constructed inside a `pick` would be built again on every parse.
const cronStringSchema = z.string();
const noRetrySchema = oneOf([false], 'must be false');

/** A `ScheduleInput`, checked by shape; `toScheduleSpec` turns it into its stored form. */
export const scheduleSchema = byShape<string | z.output<typeof atSchema> | z.output<typeof everySchema>>(
  (value) =>
    typeof value === 'string'
      ? cronStringSchema
      : typeof value === 'object' && value !== null && 'at' in value
        ? atSchema
        : typeof value === 'object' && value !== null && 'every' in value
          ? everySchema
          : undefined,
  'must be a cron string, { at } or { every, anchor? }',
);

const jobSchema = strictObject({
    name: nameSchema,
    schedule: scheduleSchema,
    timezone: z._default(z.string(), 'UTC'),
    concurrencyPolicy: z._default(policySchema, 'Allow'),
    startingDeadline: z.optional(durationSchema()),
    suspend: z.optional(z.boolean()),
    retry: z.optional(
      byShape<false | z.output<typeof retrySchema>>(
        (value) => (value === false ? noRetrySchema : typeof value === 'object' && value !== null ? retrySchema : undefined),
        'must be retry options or false',
      ),
    ),
    timeout: z.optional(durationSchema(1)),
    attemptTimeout: z.optional(durationSchema(1)),
    pendingTimeout: z.optional(durationSchema(1)),
    startAt: z.optional(instantSchema),
    endAt: z.optional(instantSchema),
    jitter: z.optional(durationSchema()),
    maxRuns: z.optional(maxRunsSchema),
    completions: z._default(indexCountSchema, 1),
    parallelism: z._default(indexCountSchema, 1),
    history: z._default(
      strictObject({ succeeded: z._default(countSchema, 3), failed: z._default(countSchema, 1), ttl: z.optional(durationSchema(1)) }),
      { succeeded: 3, failed: 1 },
    ),
    data: z.optional(jsonSchema),
    handler: z.custom<JobHandler>((value) => typeof value === 'function', 'must be a function'),
  })
  .check(
    z.superRefine((job, ctx) => {
      checkZoneAndCron(job, ctx);
      if (job.startAt !== undefined && job.endAt !== undefined && job.endAt < job.startAt) {
        ctx.addIssue({ code: 'custom', path: ['endAt'], message: `must not be before startAt (${new Date(job.startAt).toISOString()})` });
      }
    }),
  );

/** The checks of a schedule that need its time zone: the zone is known, a cron expression is valid. */
export function checkZoneAndCron(input: { readonly timezone: string; readonly schedule: z.output<typeof scheduleSchema> }, ctx: z.core.$RefinementCtx): void {
  if (!isValidTimeZone(input.timezone)) {
    ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'is not a known IANA time zone' });
    return;
  }
  if (typeof input.schedule === 'string') {
    const problem = cronProblem(input.schedule, input.timezone);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['schedule'], message: `invalid cron expression: ${problem}` });
  }
}

/** A parsed `ScheduleInput` in its stored form (a cron spec is shared per expression text). */
export function toScheduleSpec(schedule: z.output<typeof scheduleSchema>): ScheduleSpec {
  return typeof schedule === 'string'
    ? cronSpec(schedule.trim())
    : 'at' in schedule
      ? { kind: 'at', at: schedule.at }
      : schedule.anchor === undefined
        ? { kind: 'every', everyMs: schedule.every }
        : { kind: 'every', everyMs: schedule.every, anchor: schedule.anchor };
}

export interface NormalizedRetry {
  readonly limit: number;
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
  readonly jitter: number;
}

const NO_RETRY: NormalizedRetry = { limit: 0, initialDelayMs: 0, factor: 1, maxDelayMs: 0, jitter: 0 };

function normalizeRetry(options: z.output<typeof retrySchema>): NormalizedRetry {
  return {
    limit: options.limit,
    initialDelayMs: options.initialDelay,
    factor: options.factor,
    maxDelayMs: options.maxDelay,
    jitter: options.jitter,
  };
}

/** The retry policy of a job that gives none: the schema's defaults, parsed and normalized once. */
const DEFAULT_RETRY = normalizeRetry(retrySchema.parse({}));

/** A validated job definition, in the units the core works in. */
export interface NormalizedJob {
  readonly name: string;
  readonly schedule: ScheduleSpec;
  readonly timezone: string;
  readonly concurrencyPolicy: ConcurrencyPolicy;
  readonly startingDeadlineMs?: number;
  readonly suspend?: boolean;
  readonly retry: NormalizedRetry;
  readonly timeoutMs?: number;
  readonly attemptTimeoutMs?: number;
  readonly pendingTimeoutMs?: number;
  /** Present when `completions` > 1. */
  readonly fanOut?: FanOutSpec;
  readonly history: HistoryLimits;
  readonly startAt?: number;
  readonly endAt?: number;
  /** Present when `jitter` is more than 0. */
  readonly jitterMs?: number;
  readonly maxRuns?: number;
  readonly data?: JsonValue;
  readonly handler: JobHandler;
}

export function parseJobDefinition(input: JobDefinition<never> | JobDefinition): NormalizedJob {
  const job = parseInput(jobSchema, input, `register(${describeValue(nameOf(input))})`);
  const schedule = toScheduleSpec(job.schedule);
  const retry = job.retry === undefined ? DEFAULT_RETRY : job.retry === false ? NO_RETRY : normalizeRetry(job.retry);
  const { succeeded, failed, ttl } = job.history;
  const normalized: Draft<NormalizedJob> = {
    name: job.name,
    schedule,
    timezone: job.timezone,
    concurrencyPolicy: job.concurrencyPolicy,
    retry,
    history: ttl === undefined ? { succeeded, failed } : { succeeded, failed, ttlMs: ttl },
    handler: job.handler,
  };
  // Optional fields are assigned, not spread: registering 100,000 jobs builds 100,000 of these.
  // More workers than indices would idle: parallelism is capped at completions.
  if (job.completions > 1) {
    normalized.fanOut = { completions: job.completions, parallelism: Math.min(job.parallelism, job.completions) };
  }
  if (job.pendingTimeout !== undefined) normalized.pendingTimeoutMs = job.pendingTimeout;
  if (job.startingDeadline !== undefined) normalized.startingDeadlineMs = job.startingDeadline;
  if (job.suspend !== undefined) normalized.suspend = job.suspend;
  if (job.timeout !== undefined) normalized.timeoutMs = job.timeout;
  if (job.attemptTimeout !== undefined) normalized.attemptTimeoutMs = job.attemptTimeout;
  if (job.data !== undefined) normalized.data = job.data;
  if (job.startAt !== undefined) normalized.startAt = job.startAt;
  if (job.endAt !== undefined) normalized.endAt = job.endAt;
  if (job.jitter !== undefined && job.jitter > 0) normalized.jitterMs = job.jitter;
  if (job.maxRuns !== undefined) normalized.maxRuns = job.maxRuns;
  return normalized;
}

/**
 * An object with these methods: a structural check, so that a store, lock or clock
 * of your own passes, and a value that is not one fails here naming what it lacks
 * rather than later, as a `TypeError` reported as a store failure. The methods are
 * given as a record of every key, so the compiler keeps the lists complete.
 */
function implementing<T>(what: string, methods: Record<string, boolean>) {
  const names = Object.keys(methods);
  return z.custom<T>().check(
    z.superRefine((value, ctx) => {
      if (typeof value !== 'object' || value === null) {
        ctx.addIssue({ code: 'custom', message: `must be ${what}` });
        return;
      }
      const kind = (name: string) => typeof (value as Record<string, unknown>)[name];
      const missing = names.filter((name) => methods[name] === true && kind(name) !== 'function');
      if (missing.length > 0) {
        ctx.addIssue({ code: 'custom', message: `must be ${what}, but ${missing.map((name) => `${name}()`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing` });
      }
      // An optional method is absent or a function: never a value the core would call and crash on.
      for (const name of names) {
        if (methods[name] === false && kind(name) !== 'undefined' && kind(name) !== 'function') {
          ctx.addIssue({ code: 'custom', path: [name], message: 'must be a function when given' });
        }
      }
    }),
  );
}

/** The keys of `T` whose values are functions (an optional method's too). */
type MethodOf<T> = { [K in keyof T]-?: NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never }[keyof T];

/** The store's methods: `true` for the required ones, `false` for the optional ones (checked where they are used). */
const STORE_METHODS: { readonly [K in MethodOf<Store>]-?: undefined extends Store[K] ? false : true } = {
  init: true,
  close: true,
  identity: false,
  upsertJobs: true,
  getJob: true,
  listJobs: true,
  removeJob: true,
  setSuspended: true,
  scheduleRun: true,
  createRun: true,
  addBackfill: true,
  scheduleBackfillRun: true,
  findReadyRuns: true,
  claimRun: true,
  renewLease: true,
  finishAttempt: true,
  recoverExpiredRuns: true,
  expirePendingRuns: true,
  deleteExpiredRuns: true,
  getRun: true,
  listRuns: true,
  listRunsOfJobs: false,
  listIndices: true,
  watch: false,
  flushNotifications: false,
  lock: false,
};
const LOCK_METHODS: Record<keyof Lock, boolean> = { acquire: true, renew: true, renewAll: false, release: true, list: false };
const CLOCK_METHODS: Record<Exclude<keyof Clock, 'track'>, true> = { now: true, setTimer: true, clearTimer: true, sleep: true };

export const lockSchema = implementing<Lock>('a Lock (acquire, renew, release)', LOCK_METHODS);

/**
 * The lock that elects the planner: the scheduler's `lock` option, else the store's own
 * (`store.lock()`, checked as a Lock). A store may have no lock (`LockProvider` is
 * optional): then the option is required, a `ValidationError` naming `lock` otherwise.
 */
export function plannerLock(store: Store, lock: Lock | undefined): Lock {
  if (lock !== undefined) return lock;
  if (store.lock === undefined) {
    throw new ValidationError('new Scheduler()', [{ path: 'lock', message: 'is required when the store has no lock() (a Lock that elects the planner)', value: undefined }]);
  }
  return parseInput(lockSchema, store.lock(), 'new Scheduler(): store.lock()');
}

export const clockSchema = implementing<Clock>('a Clock (now, setTimer, clearTimer, sleep)', CLOCK_METHODS).check(
  z.superRefine((clock, ctx) => {
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') return; // reported above
    if (clock.track !== undefined && typeof clock.track !== 'function') ctx.addIssue({ code: 'custom', path: ['track'], message: 'must be a function when given' });
    // Read once here: a clock whose time is not epoch milliseconds would corrupt every record it dates.
    let now: unknown;
    try {
      now = clock.now();
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['now'], message: `must return epoch milliseconds (it threw: ${messageOf(error)})` });
      return;
    }
    if (typeof now !== 'number' || Number.isNaN(new Date(now).getTime())) {
      ctx.addIssue({ code: 'custom', path: ['now'], message: `must return epoch milliseconds (it returned ${describeValue(now)})` });
    }
  }),
);

/** 1 to 200 characters, none of them a control character (Postgres refuses NUL) or half a surrogate pair. */
const INSTANCE_ID = /^[^\p{Cc}\p{Cs}]{1,200}$/u;

/** The `name` of a definition for the heading of its errors, if it has a string one (a hostile getter gets '?'). */
function nameOf(input: unknown): string {
  try {
    const name = (input as { name?: unknown } | null | undefined)?.name;
    return typeof name === 'string' ? name : '?';
  } catch {
    return '?';
  }
}

export const storeSchema = implementing<Store>('a Store', STORE_METHODS).check(
  z.superRefine((store, ctx) => {
    if (typeof store !== 'object' || store === null) return; // reported above
    const partitions: unknown = store.partitions;
    if (partitions !== undefined && !(typeof partitions === 'number' && Number.isInteger(partitions) && partitions >= 1 && partitions <= MAX_PARTITIONS)) {
      ctx.addIssue({ code: 'custom', path: ['partitions'], message: `must be a whole number from 1 to ${MAX_PARTITIONS} when given`, input: partitions });
    }
  }),
);

export const schedulerOptionsSchema = strictObject({
  store: z.optional(storeSchema),
  clock: z.optional(clockSchema),
  instanceId: z.optional(z.string({ error: 'must be a string' }).check(z.refine((id) => INSTANCE_ID.test(id), 'must be 1 to 200 characters, no control characters'))),
  maxConcurrentRuns: z.optional(z.union([integerSchema(1), oneOf([Infinity], 'must be Infinity')])),
  leaseMs: z.optional(
    z.number().check(integer(), z.gte(100, 'must be at least 100 ms'), z.lte(MAX_DURATION_MS, 'must be at most 100 years')),
  ),
  lock: z.optional(lockSchema),
  logger: z.optional(
    z.custom<NonNullable<SchedulerOptions['logger']>>(
      (value) => value === false || isLogger(value),
      'must be false or an object with error, warn, info and debug methods (a pino or bunyan logger fits)',
    ),
  ),
  telemetry: z.optional(
    z.custom<NonNullable<SchedulerOptions['telemetry']>>(
      (value) => typeof value === 'boolean' || isTelemetryOptions(value),
      'must be true, false, or { tracerProvider?, meterProvider? } (an OpenTelemetry TracerProvider and MeterProvider)',
    ),
  ),
});

export const stopOptionsSchema = strictObject({ abort: z.optional(z.boolean({ error: 'must be true or false' })), timeout: z.optional(durationSchema()) });

export const triggerOptionsSchema = strictObject({ data: z.optional(jsonSchema), idempotencyKey: z.optional(storedNameSchema) });

export const backfillOptionsSchema = strictObject({ from: instantSchema, to: instantSchema })
  .check(z.refine((range) => range.from <= range.to, { message: 'must not be before from', path: ['to'] }));

const statusSchema = oneOf(['pending', 'running', 'succeeded', 'failed', 'cancelled'], 'must be "pending", "running", "succeeded", "failed" or "cancelled"');

/** A list of statuses, each checked (a transform rather than `z.array`, which a bundled app then does not carry). */
const statusListSchema = z.transform((list: readonly unknown[], payload): RunStatus[] => {
  const statuses: RunStatus[] = [];
  for (let index = 0; index < list.length; index += 1) {
    const result = safeParse(statusSchema, list[index]);
    if (result.success) statuses.push(result.data);
    else for (const issue of result.issues) fail(payload, issue.message, [index, ...issue.path]);
  }
  return statuses;
});

export const listRunsOptionsSchema = strictObject({
  // By shape, so that a bad status is named (`status.1: must be "pending", ...`), not "Invalid input".
  status: z.optional(
    byShape<RunStatus | RunStatus[]>((value) => (Array.isArray(value) ? statusListSchema : statusSchema), 'must be a run status or a list of them'),
  ),
  limit: z._default(integerSchema(1, 10_000), 100),
});

export const listJobsOptionsSchema = strictObject({
  after: z.optional(storedNameSchema),
  limit: z.optional(integerSchema(1, 10_000)),
});

export const countArgSchema = integerSchema(1, 10_000);

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

function isLogger(value: unknown): boolean {
  return isObject(value) && ['error', 'warn', 'info', 'debug'].every((level) => typeof (value as Record<string, unknown>)[level] === 'function');
}

function isTelemetryOptions(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { tracerProvider, meterProvider, ...rest } = value as Record<string, unknown>;
  const has = (provider: unknown, method: string) =>
    provider === undefined || (isObject(provider) && typeof (provider as Record<string, unknown>)[method] === 'function');
  return Object.keys(rest).length === 0 && has(tracerProvider, 'getTracer') && has(meterProvider, 'getMeter');
}

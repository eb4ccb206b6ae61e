/**
 * zod schemas for every public input, and their normalized forms: durations in
 * milliseconds, instants in epoch milliseconds, schedules in their stored shape.
 * `parseInput` turns a failed parse into a `ValidationError` naming field and value.
 * Written with zod/mini, whose functions a bundler keeps only when used (zod's
 * chained API brings all of itself and every locale: 443 KB of a minimal app).
 */
import * as z from 'zod/mini';
import type { Draft } from './draft.js';
import { parseDuration } from './duration.js';
import { cronProblem, cronSpec, isValidTimeZone } from './schedule/index.js';
import type { ConcurrencyPolicy, FanOutSpec, HistoryLimits, JsonValue, ScheduleSpec } from './store.js';
import type { JobDefinition, JobHandler, SchedulerOptions } from './types.js';
import { parseInput, safeParse, strictObject } from './validation.js';

const NAME = /^[A-Za-z0-9_.-]{1,200}$/;
const MIN_EVERY_MS = 1_000;

/** Reports a problem found by a transform (`path` relative to the transformed value), which then yields no value. */
function fail(payload: z.core.ParsePayload, message: string, path: PropertyKey[] = []): never {
  payload.issues.push({ code: 'custom', message, path, input: payload.value });
  return z.NEVER;
}

export const nameSchema = z.string({ error: 'must be a string' }).check(z.regex(NAME, 'must be 1 to 200 letters, digits, "-", "_" or "."'));

function durationSchema(min = 0) {
  return z.pipe(
    z.union([z.number(), z.string()], { error: 'must be a duration (milliseconds or a string like "10s")' }),
    z.transform((value: number | string, payload) => {
      const ms = parseDuration(value);
      if (ms === undefined || ms < min) {
        return fail(payload, min > 0 ? `must be a duration of at least ${min} ms` : 'must be a non-negative duration such as 500, "10s" or "1h30m"');
      }
      return ms;
    }),
  );
}

export const instantSchema = z.pipe(
  z.union([z.date(), z.string(), z.number()], { error: 'must be a Date, an ISO-8601 string or epoch milliseconds' }),
  z.transform((value: Date | string | number, payload) => {
    const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
    return Number.isFinite(ms) ? ms : fail(payload, 'must be a valid instant');
  }),
);

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
    for (const issue of result.error.issues) fail(payload, issue.message, issue.path);
    return z.NEVER;
  });
}

/** Any JSON value; anything else (a Date, a function, NaN, a class instance) is reported at its exact path. */
const jsonSchema = z.transform((value: unknown, payload): JsonValue => {
  const problem = jsonProblem(value, []);
  return problem === undefined ? (value as JsonValue) : fail(payload, problem.message, problem.path);
});

function jsonProblem(value: unknown, path: PropertyKey[]): { path: PropertyKey[]; message: string } | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { path, message: 'must be a finite number (JSON)' };
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = jsonProblem(item, [...path, index]);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [key, item] of Object.entries(value)) {
      const problem = jsonProblem(item, [...path, key]);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return { path, message: 'must be a JSON value (string, finite number, boolean, null, array or plain object)' };
}

const policySchema = z.enum(['Allow', 'Forbid', 'Replace', 'CatchUp'], {
  error: 'must be "Allow", "Forbid", "Replace" or "CatchUp"',
});

/** An integer from `min` to `max`, with the messages every count of the API shares. */
function integerSchema(min: number, max?: number) {
  const checks = [z.int('must be an integer'), z.gte(min, `must be ${min} or more`)];
  return z.number().check(...(max === undefined ? checks : [...checks, z.lte(max, `must be at most ${max}`)]));
}

const countSchema = integerSchema(0);
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
const noRetrySchema = z.literal(false);

const scheduleSchema = byShape<string | z.output<typeof atSchema> | z.output<typeof everySchema>>(
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
    completions: z._default(indexCountSchema, 1),
    parallelism: z._default(indexCountSchema, 1),
    history: z.prefault(
      strictObject({ succeeded: z._default(countSchema, 3), failed: z._default(countSchema, 1), ttl: z.optional(durationSchema(1)) }),
      {},
    ),
    data: z.optional(jsonSchema),
    handler: z.custom<JobHandler>((value) => typeof value === 'function', 'must be a function'),
  })
  .check(
    z.superRefine((job, ctx) => {
      if (!isValidTimeZone(job.timezone)) {
        ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'is not a known IANA time zone' });
        return;
      }
      if (typeof job.schedule === 'string') {
        const problem = cronProblem(job.schedule, job.timezone);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['schedule'], message: `invalid cron expression: ${problem}` });
      }
    }),
  );

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
  readonly data?: JsonValue;
  readonly handler: JobHandler;
}

export function parseJobDefinition(input: JobDefinition<never> | JobDefinition): NormalizedJob {
  const name = typeof (input as { name?: unknown } | undefined)?.name === 'string' ? (input as { name: string }).name : '?';
  const job = parseInput(jobSchema, input, `register(${JSON.stringify(name)})`);
  const schedule: ScheduleSpec =
    typeof job.schedule === 'string'
      ? cronSpec(job.schedule.trim())
      : 'at' in job.schedule
        ? { kind: 'at', at: job.schedule.at }
        : job.schedule.anchor === undefined
          ? { kind: 'every', everyMs: job.schedule.every }
          : { kind: 'every', everyMs: job.schedule.every, anchor: job.schedule.anchor };
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
    normalized.fanOut = { completions: job.completions, parallelism: Math.min(job.parallelism, job.completions), retryLimit: retry.limit };
  }
  if (job.pendingTimeout !== undefined) normalized.pendingTimeoutMs = job.pendingTimeout;
  if (job.startingDeadline !== undefined) normalized.startingDeadlineMs = job.startingDeadline;
  if (job.suspend !== undefined) normalized.suspend = job.suspend;
  if (job.timeout !== undefined) normalized.timeoutMs = job.timeout;
  if (job.attemptTimeout !== undefined) normalized.attemptTimeoutMs = job.attemptTimeout;
  if (job.data !== undefined) normalized.data = job.data;
  return normalized;
}

export const schedulerOptionsSchema = strictObject({
  store: z.optional(z.custom<NonNullable<SchedulerOptions['store']>>(isObject, 'must be a Store')),
  clock: z.optional(z.custom<NonNullable<SchedulerOptions['clock']>>(isObject, 'must be a Clock')),
  instanceId: z.optional(z.string().check(z.minLength(1, 'must not be empty'), z.maxLength(200, 'must be at most 200 characters'))),
  maxConcurrentRuns: z.optional(z.union([integerSchema(1), z.literal(Infinity)])),
  leaseMs: z.optional(z.number().check(z.int('must be an integer'), z.gte(100, 'must be at least 100 ms'))),
  lock: z.optional(z.custom<NonNullable<SchedulerOptions['lock']>>(isObject, 'must be a Lock')),
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

export const triggerOptionsSchema = strictObject({ data: z.optional(jsonSchema), idempotencyKey: z.optional(nameSchema) });

export const backfillOptionsSchema = strictObject({ from: instantSchema, to: instantSchema })
  .check(z.refine((range) => range.from <= range.to, { message: 'must not be before from', path: ['to'] }));

const statusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled'], {
  error: 'must be "pending", "running", "succeeded", "failed" or "cancelled"',
});

export const listRunsOptionsSchema = strictObject({
  status: z.optional(z.union([statusSchema, z.array(statusSchema)])),
  limit: z._default(integerSchema(1, 10_000), 100),
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

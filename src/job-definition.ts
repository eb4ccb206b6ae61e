/**
 * A job definition (`register()`'s input): its schema, and its normalized form, in
 * the units the core works in (`NormalizedJob`, with its retry policy and its
 * schedule in stored shape). Built on the input primitives of options.ts.
 */
import * as z from 'zod/mini';
import type { Draft } from './draft.js';
import { describeValue } from './errors.js';
import { DEFAULT_HISTORY, sharedHistory } from './job-record.js';
import { byShape, durationSchema, instantSchema, jsonSchema, nameOf, nameSchema, oneOf } from './options.js';
import { cronProblem, cronSpec, isValidTimeZone } from './schedule/index.js';
import type { ConcurrencyPolicy, FanOutSpec, HistoryLimits, JsonValue, ScheduleSpec } from './store.js';
import type { JobDefinition, JobHandler } from './types.js';
import { integerSchema, parseInput, strictObject } from './validation.js';

const MIN_EVERY_MS = 1_000;

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
      strictObject({
        succeeded: z._default(countSchema, DEFAULT_HISTORY.succeeded),
        failed: z._default(countSchema, DEFAULT_HISTORY.failed),
        ttl: z.optional(durationSchema(1)),
      }),
      { succeeded: DEFAULT_HISTORY.succeeded, failed: DEFAULT_HISTORY.failed },
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
    // One object for every job with the default limits, not one per job.
    history: ttl === undefined ? sharedHistory({ succeeded, failed }) : { succeeded, failed, ttlMs: ttl },
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

/**
 * zod schemas for the public inputs, and their normalized forms: the primitives
 * (names, durations and instants in whole milliseconds, see duration.ts and
 * instant.ts: no fraction ever reaches a store; `data` as a private frozen copy,
 * json-value.ts), the scheduler's options (store, lock, clock) and the options of its
 * methods. A job definition is job-definition.ts, built on these primitives. `parseInput` turns a failed parse into a `ValidationError`
 * naming field and value. Written with zod/mini, whose functions a bundler keeps
 * only when used (zod's chained API brings all of itself and every locale: 443 KB
 * of a minimal app).
 */
import { MAX_PARTITIONS } from './partition.js';
import * as z from 'zod/mini';
import type { Clock } from './clock.js';
import { DURATION_FORMS, MAX_DURATION_MS, parseDuration } from './duration.js';
import { ValidationError, describeValue, messageOf } from './errors.js';
import { readInstant } from './instant.js';
import { copyJsonValue } from './json-value.js';
import { NAME_PATTERN, RESERVED_NAME_SEGMENTS, reservedSegmentOf } from './run-id.js';
import type { JsonValue, Lock, RunStatus, Store } from './store.js';
import type { SchedulerOptions } from './types.js';
import { integer, integerSchema, parseInput, safeParse, strictObject } from './validation.js';

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
export function byShape<T>(pick: (value: unknown) => z.ZodMiniType<T> | undefined, message: string) {
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
export const jsonSchema = z.transform((value: unknown, payload): JsonValue => {
  const copy = copyJsonValue(value);
  return 'problem' in copy ? fail(payload, copy.problem.message, [...copy.problem.path]) : copy.value;
});

/**
 * Exactly one of `values`: `z.enum`'s rule as a `z.custom` check, with the message given
 * (`z.enum` and `z.literal` would add 1 KB to a bundled app for these three uses).
 */
export function oneOf<const T>(values: readonly T[], error: string) {
  return z.custom<T>((value) => values.includes(value as T), error);
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
  watchIdentity: false,
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
  sweepRuns: false,
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
export function nameOf(input: unknown): string {
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

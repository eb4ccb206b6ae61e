/**
 * Between the contract's records and the store's SQL functions. Out: the `json` the
 * SQL returns becomes records, optional fields that are SQL NULL left out (never
 * `undefined`-valued keys), and `data` present exactly when the run carries data
 * (`hasData`), so JSON `null` data survives the round trip. In: what the core hands
 * the store becomes the functions' parameters (`upsertParam`, `dataParam`,
 * `traceParam`), an absent value SQL NULL.
 */
import { jobRecord, sharedParts, type Draft } from '../../src/adapter-kit.js';
import type { IndexRecord, JobRecord, NewRun, RunRecord, UpsertJobInput } from '../../src/store.js';

type Raw = Record<string, unknown>;

const RUN_FIELDS = ['id', 'jobName', 'scheduledAt', 'trigger', 'status', 'attempt', 'createdAt', 'readyAt', 'fence'];
const RUN_OPTIONAL = [
  'startedAt', 'finishedAt', 'error', 'traceparent', 'owner', 'leaseUntil', 'deadlineAt', 'fanOut', 'pendingUntil', 'expiresAt',
];
const INDEX_FIELDS = ['runId', 'index', 'status', 'attempt', 'readyAt', 'fence'];
const INDEX_OPTIONAL = ['startedAt', 'finishedAt', 'error', 'owner', 'leaseUntil'];

function pick(raw: Raw, required: readonly string[], optional: readonly string[]): Raw {
  const out: Raw = {};
  for (const key of required) out[key] = raw[key];
  for (const key of optional) if (raw[key] !== null && raw[key] !== undefined) out[key] = raw[key];
  return out;
}

export function toRun(raw: unknown): RunRecord {
  const run = pick(raw as Raw, RUN_FIELDS, RUN_OPTIONAL);
  if ((raw as Raw).hasData === true) run.data = (raw as Raw).data;
  return run as unknown as RunRecord;
}

export function toRuns(raw: unknown): RunRecord[] {
  return (raw as unknown[]).map(toRun);
}

export function toIndex(raw: unknown): IndexRecord {
  return pick(raw as Raw, INDEX_FIELDS, INDEX_OPTIONAL) as unknown as IndexRecord;
}

/** A job's JSON as its record: its fields in one order (its SQL NULLs left out), with what jobs share in one object (`sharedParts`). */
export function toJob(raw: unknown): JobRecord {
  const job = sharedParts(raw as Draft<JobRecord>);
  return jobRecord(job, job);
}

/** `data` as a parameter: JSON text cast to `json`, or SQL NULL when the run has none (not JSON `null`). */
export function dataParam(run: NewRun): string | null {
  return run.data === undefined ? null : JSON.stringify(run.data);
}

/** The run's `traceparent` as the last parameter of a `#traced` call; none (the plain call) when it has none. */
export function traceParam(run: NewRun | undefined): string[] {
  return run?.traceparent === undefined ? [] : [run.traceparent];
}

/** One element of `upsert_jobs`' batch (see `upsert_jobs` in `migration-v1-schema.ts`); `null` for an absent value. */
export function upsertParam(input: UpsertJobInput): Record<string, unknown> {
  const { spec } = input;
  return {
    name: spec.name,
    schedule: spec.schedule,
    timezone: spec.timezone,
    policy: spec.concurrencyPolicy,
    deadline: spec.startingDeadlineMs ?? null,
    historySucceeded: spec.history.succeeded,
    historyFailed: spec.history.failed,
    historyTtl: spec.history.ttlMs ?? null,
    pendingTimeout: spec.pendingTimeoutMs ?? null,
    fanOutCompletions: spec.fanOut?.completions ?? null,
    fanOutParallelism: spec.fanOut?.parallelism ?? null,
    retryLimit: spec.retryLimit ?? null,
    startAt: spec.startAt ?? null,
    endAt: spec.endAt ?? null,
    jitterMs: spec.jitterMs ?? null,
    maxRuns: spec.maxRuns ?? null,
    now: input.now,
    cursor: input.initialCursor,
    suspended: input.suspended ?? null,
  };
}

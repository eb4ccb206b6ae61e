/**
 * Turns the `json` the store's SQL returns into the contract's records: optional
 * fields that are SQL NULL are left out (never `undefined`-valued keys), and `data`
 * is present exactly when the run carries data (`hasData`), so JSON `null` data
 * survives the round trip.
 */
import type { IndexRecord, JobRecord, RunRecord } from '../../src/store.js';

type Raw = Record<string, unknown>;

const RUN_FIELDS = ['id', 'jobName', 'scheduledAt', 'trigger', 'status', 'attempt', 'createdAt', 'readyAt', 'fence'];
const RUN_OPTIONAL = [
  'startedAt', 'finishedAt', 'error', 'traceparent', 'owner', 'leaseUntil', 'deadlineAt', 'fanOut', 'pendingUntil', 'expiresAt',
];
const INDEX_FIELDS = ['runId', 'index', 'status', 'attempt', 'readyAt', 'fence'];
const INDEX_OPTIONAL = ['startedAt', 'finishedAt', 'error', 'owner', 'leaseUntil'];
const JOB_FIELDS = [
  'name', 'schedule', 'timezone', 'concurrencyPolicy', 'history', 'suspended', 'createdAt', 'cursor',
  'succeeded', 'failed', 'skipped', 'scheduledRuns', 'backfills',
];
const JOB_OPTIONAL = [
  'startingDeadlineMs', 'fanOut', 'retryLimit', 'pendingTimeoutMs', 'lastScheduleTime', 'lastSuccessfulTime', 'startAt', 'endAt', 'jitterMs', 'maxRuns',
];

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

export function toJob(raw: unknown): JobRecord {
  return pick(raw as Raw, JOB_FIELDS, JOB_OPTIONAL) as unknown as JobRecord;
}

/**
 * How records are written to and read back from Redis: the ARGV strings the scripts
 * receive, the flat HGETALL arrays they return for jobs and runs, and the JSON
 * objects of string values that hold index records. Numbers travel as JavaScript's
 * own decimal strings and JSON values (`data`, `error`, the job spec) as
 * `JSON.stringify` output, so every value round-trips exactly.
 */
import type {
  BackfillRange,
  FanOutState,
  IndexRecord,
  IndexStatus,
  JobRecord,
  JobSpec,
  JsonValue,
  NewRun,
  RunError,
  RunRecord,
  RunStatus,
  RunTrigger,
  StoreNotification,
  UpsertJobInput,
  UpsertJobResult,
} from '../../src/store.js';
import { jobRecord, sharedParts, type Draft } from '../../src/adapter-kit.js';

/** A reply that does not have the shape a script promises: a bug or a foreign key, never user input. */
function malformed(what: string): Error {
  return new Error(`tickwork redis store: malformed ${what} in Redis`);
}

export function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw malformed(what);
  return value;
}

export function asString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw malformed(what);
  return value;
}

/** Values by field name: a hash's fields (`fields`), an index record's JSON object's. */
interface FieldValues {
  get(field: string): string | undefined;
}

/**
 * A flat `[field, value, ...]` HGETALL reply, its fields looked up where they are
 * rather than copied into a map: a job's reply is decoded on each write of the job,
 * a run's on each claim, and a map of a dozen fields was 0.9 KB of garbage each.
 */
function fields(value: unknown, what: string): FieldValues {
  const flat = asArray(value, what);
  for (const item of flat) asString(item, what);
  return {
    get(field) {
      for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === field) return flat[i + 1] as string;
      return undefined;
    },
  };
}

function required(map: FieldValues, field: string, what: string): string {
  const value = map.get(field);
  if (value === undefined) throw malformed(`${what} (no ${field})`);
  return value;
}

/** Sets `record[field]` to the hash's number, when the hash has the field (an absent one stays absent). */
function assignNumber<T extends object>(record: T, map: FieldValues, field: keyof T & string): void {
  const value = map.get(field);
  if (value !== undefined) (record as Record<string, unknown>)[field] = Number(value);
}

/** A number as a script argument: JavaScript's decimal form, which Lua's `tonumber` reads exactly. */
export function num(value: number): string {
  return String(value);
}

/** An optional number as a script argument: '' when absent. */
export function optional(value: number | undefined): string {
  return value === undefined ? '' : num(value);
}

/** The script arguments of one job in `UPSERT_JOBS` (`UPSERT_ARGC` of them, in the order its TSDoc gives). */
export function upsertArgs(input: UpsertJobInput): string[] {
  const { spec } = input;
  return [
    spec.name,
    encodeSpec(spec),
    spec.concurrencyPolicy,
    num(spec.history.succeeded),
    num(spec.history.failed),
    optional(spec.history.ttlMs),
    optional(spec.pendingTimeoutMs),
    optional(spec.fanOut?.completions),
    optional(spec.fanOut?.parallelism),
    optional(spec.retryLimit),
    optional(spec.maxRuns),
    num(input.now),
    num(input.initialCursor),
    input.suspended === undefined ? '' : input.suspended ? '1' : '0',
  ];
}

/**
 * The script arguments describing a new run: readyAt, id, jobName, scheduledAt,
 * trigger, hasData, data, then traceparent only when the run has one (the run's
 * arguments come last in every script).
 */
export function newRunArgs(run: NewRun): string[] {
  const args = [num(run.readyAt), run.id, run.jobName, num(run.scheduledAt), run.trigger, run.data === undefined ? '0' : '1', run.data === undefined ? '' : JSON.stringify(run.data)];
  if (run.traceparent !== undefined) args.push(run.traceparent);
  return args;
}

export function encodeError(error: RunError): string {
  return JSON.stringify({ name: error.name, message: error.message });
}

/**
 * A backfill range as one list element: `next to id`, then a tab and the
 * `traceparent` when it has one (the numbers never contain spaces, the core's IDs
 * never a tab; SCHEDULE_BACKFILL_RUN keeps what follows the ID).
 */
export function encodeBackfill(range: BackfillRange): string {
  const traced = range.traceparent === undefined ? '' : `\t${range.traceparent}`;
  return `${num(range.next)} ${num(range.to)} ${range.id}${traced}`;
}

function decodeBackfill(value: unknown): BackfillRange {
  const match = /^(\S+) (\S+) ([^\t]*)(?:\t([\s\S]*))?$/.exec(asString(value, 'backfill'));
  if (match === null) throw malformed('backfill');
  const range = { id: match[3] ?? '', next: Number(match[1]), to: Number(match[2]) };
  return match[4] === undefined ? range : { ...range, traceparent: match[4] };
}

/** The job spec as stored: the whole object, so fields the core adds later survive. */
export function encodeSpec(spec: JobSpec): string {
  return JSON.stringify(spec);
}

/** A `jobReply` (`[HGETALL job, LRANGE backfills]`) as a record. */
export function decodeJob(value: unknown): JobRecord {
  const [hash, backfills] = asArray(value, 'job');
  const map = fields(hash, 'job');
  // The spec is parsed on every read, not remembered by its JSON: that kept each job's JSON and a parsed copy
  // in the process (0.3 KB per job). What jobs share (a cron spec, the history limits) comes from one object.
  const job = jobRecord(sharedParts(JSON.parse(required(map, 'spec', 'job')) as Draft<JobSpec>), {
    suspended: map.get('suspended') === '1',
    createdAt: Number(required(map, 'createdAt', 'job')),
    cursor: Number(required(map, 'cursor', 'job')),
    succeeded: Number(map.get('succeeded') ?? 0),
    failed: Number(map.get('failed') ?? 0),
    skipped: Number(map.get('skipped') ?? 0),
    scheduledRuns: Number(map.get('scheduledRuns') ?? 0),
    backfills: asArray(backfills, 'job backfills').map(decodeBackfill),
  });
  assignNumber(job, map, 'lastScheduleTime');
  assignNumber(job, map, 'lastSuccessfulTime');
  return job;
}

/** `UPSERT_JOBS`'s `{ created, job }` pairs as results: exactly `count` of them, or the reply is malformed. */
export function decodeUpserts(value: unknown, count: number): UpsertJobResult[] {
  const replies = asArray(value, 'upsertJobs reply');
  if (replies.length !== count) throw malformed(`upsertJobs reply (${replies.length} results for ${count} jobs)`);
  return replies.map((reply) => {
    const [created, job, cancelled] = asArray(reply, 'upsertJobs result');
    const result = { created: asString(created, 'upsertJobs created flag') === '1', job: decodeJob(job) };
    return cancelled === undefined ? result : { ...result, cancelled: decodeRuns(cancelled) };
  });
}

/** A run's HGETALL reply as a record, or `undefined` when the run does not exist. */
export function decodeRunOrUndefined(value: unknown): RunRecord | undefined {
  if (value === null || (Array.isArray(value) && value.length === 0)) return undefined;
  return decodeRun(value);
}

/** A fan-out run's shape and counts, kept as separate fields of the run's hash; undefined for a plain run. */
function decodeFanOut(map: FieldValues): FanOutState | undefined {
  const completions = map.get('completions');
  if (completions === undefined) return undefined;
  const fanOut: Draft<FanOutState> = {
    completions: Number(completions),
    parallelism: Number(required(map, 'parallelism', 'run')),
    succeeded: Number(required(map, 'fanSucceeded', 'run')),
    failed: Number(required(map, 'fanFailed', 'run')),
    active: Number(required(map, 'fanActive', 'run')),
  };
  assignNumber(fanOut, map, 'retryLimit');
  return fanOut;
}

/** A run's HGETALL reply as a record: its fields assigned one by one, the absent optional ones left out (no spreads). */
export function decodeRun(value: unknown): RunRecord {
  const map = fields(value, 'run');
  const run: Draft<RunRecord> = {
    id: required(map, 'id', 'run'),
    jobName: required(map, 'jobName', 'run'),
    scheduledAt: Number(required(map, 'scheduledAt', 'run')),
    trigger: required(map, 'trigger', 'run') as RunTrigger,
    status: required(map, 'status', 'run') as RunStatus,
    attempt: Number(required(map, 'attempt', 'run')),
    createdAt: Number(required(map, 'createdAt', 'run')),
    readyAt: Number(required(map, 'readyAt', 'run')),
    fence: Number(required(map, 'fence', 'run')),
  };
  assignNumber(run, map, 'startedAt');
  assignNumber(run, map, 'finishedAt');
  const error = map.get('error');
  if (error !== undefined) run.error = JSON.parse(error) as RunError;
  const data = map.get('data');
  if (data !== undefined) run.data = JSON.parse(data) as JsonValue;
  const traceparent = map.get('traceparent');
  if (traceparent !== undefined) run.traceparent = traceparent;
  const owner = map.get('owner');
  if (owner !== undefined) run.owner = owner;
  assignNumber(run, map, 'leaseUntil');
  assignNumber(run, map, 'deadlineAt');
  const fanOut = decodeFanOut(map);
  if (fanOut !== undefined) run.fanOut = fanOut;
  assignNumber(run, map, 'pendingUntil');
  assignNumber(run, map, 'expiresAt');
  return run;
}

export function decodeRuns(value: unknown): RunRecord[] {
  return asArray(value, 'runs').map(decodeRun);
}

/** An index record as stored: a JSON object of strings (the error as a JSON string inside it). */
export function decodeIndex(runId: string, index: unknown, value: unknown): IndexRecord {
  const parsed: unknown = JSON.parse(asString(value, 'index record'));
  if (parsed === null || typeof parsed !== 'object') throw malformed('index record');
  const map = new Map(Object.entries(parsed as Record<string, unknown>).map(([field, v]) => [field, asString(v, 'index record')]));
  const record: Draft<IndexRecord> = {
    runId,
    index: Number(asString(index, 'index')),
    status: required(map, 'status', 'index record') as IndexStatus,
    attempt: Number(required(map, 'attempt', 'index record')),
    readyAt: Number(required(map, 'readyAt', 'index record')),
    fence: Number(required(map, 'fence', 'index record')),
  };
  assignNumber(record, map, 'startedAt');
  assignNumber(record, map, 'finishedAt');
  const error = map.get('error');
  if (error !== undefined) record.error = JSON.parse(error) as RunError;
  const owner = map.get('owner');
  if (owner !== undefined) record.owner = owner;
  assignNumber(record, map, 'leaseUntil');
  return record;
}

/** A script's `{ index, recordJson }` pair (or nil) as the index record of run `runId`. */
export function decodeIndexReply(runId: string, value: unknown): IndexRecord | undefined {
  if (value === null || value === undefined) return undefined;
  const [index, record] = asArray(value, 'index reply');
  return decodeIndex(runId, index, record);
}

const RUN_STATUSES: ReadonlySet<string> = new Set(['pending', 'running', 'succeeded', 'failed', 'cancelled']);

/**
 * The notifications of one published message: a single one, or a JSON array of them
 * in order (a batch of script calls publishes once, see `batchScript`). Entries that
 * are not notifications are skipped: they are hints, and may be dropped.
 */
export function decodeNotifications(message: string): StoreNotification[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return [];
  }
  const notifications: StoreNotification[] = [];
  for (const entry of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
    const notification = notificationOf(entry);
    if (notification !== undefined) notifications.push(notification);
  }
  return notifications;
}

function notificationOf(parsed: unknown): StoreNotification | undefined {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const { type, jobName, runId, readyAt, pendingUntil, status } = parsed as Record<string, unknown>;
  if (typeof jobName !== 'string') return undefined;
  if (type === 'job-changed') return { type, jobName };
  if (typeof runId !== 'string') return undefined;
  if (type === 'run-ready' && (typeof readyAt === 'string' || typeof readyAt === 'number')) {
    return typeof pendingUntil === 'string' || typeof pendingUntil === 'number'
      ? { type, jobName, runId, readyAt: Number(readyAt), pendingUntil: Number(pendingUntil) }
      : { type, jobName, runId, readyAt: Number(readyAt) };
  }
  if (type === 'run-finished' && typeof status === 'string' && RUN_STATUSES.has(status)) {
    return { type, jobName, runId, status: status as RunStatus };
  }
  return undefined;
}

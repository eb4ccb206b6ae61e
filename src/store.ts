/**
 * The storage contract every store implements (memory, Redis, Postgres, or yours).
 *
 * A store keeps jobs, their cursors and their runs, and makes every decision that
 * must be atomic with them across processes: each method below that says "atomic"
 * is ONE indivisible step of the store (a Lua script, a SQL transaction, a
 * synchronous block), never a read followed by a write from the core.
 *
 * Stores never read a clock. The core hands them `now` and absolute deadlines, so a
 * `FakeClock` drives every store exactly as it drives the scheduler. All instants
 * are milliseconds since the Unix epoch.
 *
 * Stores reject with whatever their client throws; the scheduler wraps failures
 * in `StoreError` and reports them. Lists of runs inside results (`active`,
 * `cancelled`) are ordered oldest first (`compareOldestFirst` in store-rules.ts).
 *
 * `tickwork/testing` exports `storeConformance()`, which proves a store against
 * this contract; every method's TSDoc below is what that suite checks.
 */

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace' | 'CatchUp';
export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type RunTrigger = 'schedule' | 'manual' | 'backfill';
/** Statuses in which a run counts as active for concurrency policies. */
export const ACTIVE_STATUSES: readonly RunStatus[] = ['pending', 'running'];

/** Any JSON value: what `data` may hold, and what stores persist as-is. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A schedule in its stored form: enough for any instance to plan the job. */
export type ScheduleSpec =
  | { readonly kind: 'cron'; readonly expression: string }
  /** `anchor` absent: the job's `createdAt` in the store. */
  | { readonly kind: 'every'; readonly everyMs: number; readonly anchor?: number }
  | { readonly kind: 'at'; readonly at: number };

/** The parts of a job definition a store keeps, so that any instance can plan and report the job. */
export interface JobSpec {
  readonly name: string;
  readonly schedule: ScheduleSpec;
  readonly timezone: string;
  readonly concurrencyPolicy: ConcurrencyPolicy;
  readonly startingDeadlineMs?: number;
  /** Finished runs kept per job; the store prunes beyond these on every finish. */
  readonly history: { readonly succeeded: number; readonly failed: number };
}

/** A pending backfill: ticks from `next` to `to` (inclusive) still to be run, oldest first. */
export interface BackfillRange {
  readonly id: string;
  /** The next tick to create a run for. */
  readonly next: number;
  /** The last tick of the range (inclusive). */
  readonly to: number;
}

export interface JobRecord extends JobSpec {
  readonly suspended: boolean;
  readonly createdAt: number;
  /**
   * The planning position: ticks at or before it have been dealt with (run, skipped
   * or missed). Set by `upsertJob` when the job is created, then only moved forward
   * by `scheduleRun`.
   */
  readonly cursor: number;
  /** The cursor's value once the planner has moved it at least once. */
  readonly lastScheduleTime?: number;
  readonly lastSuccessfulTime?: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
  /** Pending backfills, oldest request first. */
  readonly backfills: readonly BackfillRange[];
}

export interface RunError {
  readonly name: string;
  readonly message: string;
}

export interface RunRecord {
  /** `${job}.${unixSeconds}`, `${job}.manual.${key}` or `${job}.backfill.${unixSeconds}`. */
  readonly id: string;
  readonly jobName: string;
  readonly scheduledAt: number;
  readonly trigger: RunTrigger;
  readonly status: RunStatus;
  /** The number of the current attempt (or the next one, while pending): 1, 2, ... */
  readonly attempt: number;
  readonly createdAt: number;
  /** When a pending run may be claimed: its creation, or the time of its next retry. */
  readonly readyAt: number;
  /** First start of the first attempt. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  readonly error?: RunError;
  /** Manual trigger's data; absent means the job's own `data`. */
  readonly data?: JsonValue;
  /** Instance holding the lease while `running`. */
  readonly owner?: string;
  readonly leaseUntil?: number;
  /** Fencing token: incremented by every claim; stale owners' writes are refused. */
  readonly fence: number;
  /** Whole-run deadline (`timeout`), fixed when the run first starts. */
  readonly deadlineAt?: number;
}

/** What the core asks a store to create; the store fills in status, attempt, fence and timestamps. */
export interface NewRun {
  readonly id: string;
  readonly jobName: string;
  readonly scheduledAt: number;
  readonly trigger: RunTrigger;
  readonly data?: JsonValue;
}

export interface UpsertJobInput {
  readonly spec: JobSpec;
  readonly now: number;
  /** The cursor of a job created by this call (ignored when the job exists: its cursor is kept). */
  readonly initialCursor: number;
  /** When given, sets the shared suspend flag; when absent, a new job starts active and an existing one keeps its flag. */
  readonly suspended?: boolean;
}

export interface ScheduleRunInput {
  readonly jobName: string;
  /** Compare-and-set: nothing is written unless the job's cursor equals this. */
  readonly expectedCursor: number;
  /** The new cursor (the tick of `run`, or the last missed tick). */
  readonly cursor: number;
  /** The run to create under the job's concurrency policy; absent when every due tick was missed. */
  readonly run?: NewRun;
  readonly now: number;
}

export type ScheduleRunResult =
  /** The run was created and the cursor advanced. Under `Replace`, `cancelled` lists the runs cancelled first. */
  | { readonly outcome: 'created'; readonly job: JobRecord; readonly run: RunRecord; readonly cancelled: readonly RunRecord[] }
  /** A run with that ID already existed (nothing created); the cursor advanced. */
  | { readonly outcome: 'exists'; readonly job: JobRecord; readonly run: RunRecord }
  /** `Forbid` with an active run: the tick was skipped, `skipped` incremented, the cursor advanced. */
  | { readonly outcome: 'skipped'; readonly job: JobRecord; readonly active: readonly string[] }
  /** `CatchUp` with an active run: nothing written; plan again when that run finishes. */
  | { readonly outcome: 'blocked'; readonly job: JobRecord; readonly active: readonly string[] }
  /** No run was asked for: the cursor advanced. */
  | { readonly outcome: 'advanced'; readonly job: JobRecord }
  /** Nothing written: the job is missing, suspended, or its cursor is not `expectedCursor`. */
  | { readonly outcome: 'conflict'; readonly job?: JobRecord };

export interface CreateRunInput {
  readonly run: NewRun;
  readonly now: number;
}

export type CreateRunResult =
  | { readonly outcome: 'created' | 'exists'; readonly run: RunRecord }
  | { readonly outcome: 'missing-job' };

export interface AddBackfillInput {
  readonly jobName: string;
  readonly range: BackfillRange;
}

export interface ScheduleBackfillRunInput {
  readonly jobName: string;
  readonly backfillId: string;
  /** Compare-and-set on the backfill's `next`. */
  readonly expectedNext: number;
  /** The backfill's next tick after this run; absent when this run is the range's last. */
  readonly next?: number;
  readonly run: NewRun;
  readonly now: number;
}

export type ScheduleBackfillRunResult =
  | { readonly outcome: 'created' | 'exists'; readonly job: JobRecord; readonly run: RunRecord }
  /** An earlier backfill run of the job is still active: nothing written. */
  | { readonly outcome: 'blocked'; readonly job: JobRecord }
  /** Job missing or suspended, backfill unknown, or its `next` is not `expectedNext`: nothing written. */
  | { readonly outcome: 'conflict'; readonly job?: JobRecord };

export interface FindReadyRunsInput {
  /** Only runs of these jobs (the ones this instance has registered). */
  readonly jobNames: ReadonlySet<string>;
  readonly now: number;
  readonly limit: number;
}

export interface FindReadyRunsResult {
  /** Pending runs with `readyAt <= now`, oldest `readyAt` first (ties: `scheduledAt`, then `id`). */
  readonly runs: readonly RunRecord[];
  /** The earliest `readyAt > now` among pending runs of those jobs, to wake up for. */
  readonly nextReadyAt?: number;
}

export interface ClaimRunInput {
  readonly runId: string;
  readonly owner: string;
  readonly now: number;
  readonly leaseUntil: number;
  /** The whole-run deadline to fix if the run has none yet (its first start). */
  readonly deadlineAt?: number;
}

export interface LeaseInput {
  readonly runId: string;
  readonly owner: string;
  readonly fence: number;
  readonly now: number;
}

export interface RenewLeaseInput extends LeaseInput {
  readonly leaseUntil: number;
}

export type RenewLeaseResult =
  | { readonly ok: true }
  /** The lease is gone: the run finished, was cancelled or recovered by another owner, or was deleted. */
  | { readonly ok: false; readonly status?: RunStatus };

/** How an attempt ended. */
export type AttemptOutcome =
  | { readonly status: 'succeeded' }
  /** Final failure: no more retries. */
  | { readonly status: 'failed'; readonly error: RunError }
  /** Failed attempt with a retry at `readyAt` (the run goes back to pending with `attempt + 1`). */
  | { readonly status: 'retry'; readonly error: RunError; readonly readyAt: number }
  /** Not an attempt: the owner gives the run back (shutdown); pending again, same attempt, ready now. */
  | { readonly status: 'released' };

export interface FinishAttemptInput extends LeaseInput {
  readonly outcome: AttemptOutcome;
}

export type FinishAttemptResult =
  | { readonly ok: true; readonly run: RunRecord }
  /** Fenced out: the caller no longer owns the run; nothing written. */
  | { readonly ok: false; readonly run?: RunRecord };

export interface RecoverExpiredRunsInput {
  readonly now: number;
  readonly limit: number;
}

export interface ListRunsQuery {
  readonly jobName: string;
  readonly statuses?: readonly RunStatus[];
  /** At most this many, newest (`createdAt`, then `scheduledAt`, then `id`, descending) first. */
  readonly limit?: number;
}

/** Change notifications a store sends to every instance watching it. Hints, not a log: they may be lost. */
export type StoreNotification =
  /** A run became claimable at `readyAt` (created, retried, released or recovered). */
  | { readonly type: 'run-ready'; readonly jobName: string; readonly runId: string; readonly readyAt: number }
  /** A run finished (succeeded, failed or cancelled). */
  | { readonly type: 'run-finished'; readonly jobName: string; readonly runId: string; readonly status: RunStatus }
  /** A job was created, changed, suspended, resumed, removed, or given a backfill. */
  | { readonly type: 'job-changed'; readonly jobName: string };

export interface Store {
  /** Creates tables / loads scripts (idempotent, safe to race). Called by the scheduler on start. */
  init(): Promise<void>;
  /** Releases what the store opened itself (never a client the user passed in). */
  close(): Promise<void>;
  /** The store's own lock adapter, used to elect the planner unless the scheduler is given another. */
  lock(): Lock;

  /**
   * Atomic. Creates the job with `initialCursor`, zero counters and no backfills, or
   * replaces an existing job's spec as a whole (a field absent from the new spec is
   * removed), keeping its cursor, counters, history and backfills. Sets
   * `suspended` only when given. Notifies `job-changed`.
   */
  upsertJob(input: UpsertJobInput): Promise<{ readonly job: JobRecord; readonly created: boolean }>;
  getJob(name: string): Promise<JobRecord | undefined>;
  /** Every job, by name. */
  listJobs(): Promise<readonly JobRecord[]>;
  /** Atomic. Deletes the job, all its runs and backfills. Notifies `job-changed`. Resolves false when absent. */
  removeJob(name: string): Promise<boolean>;
  /** Atomic. Sets the shared suspend flag. Notifies `job-changed`. */
  setSuspended(name: string, suspended: boolean): Promise<JobRecord | undefined>;

  /**
   * Atomic: create a scheduled run and advance the cursor, under the job's
   * concurrency policy. With `expectedCursor` matching and the job not suspended:
   * - no `run`: the cursor moves (`advanced`);
   * - `run.id` exists: the cursor moves, nothing else (`exists`);
   * - `Forbid` with an active run: `skipped` + 1 and the cursor moves (`skipped`);
   * - `CatchUp` with an active run: nothing written (`blocked`);
   * - `Replace`: every active run is cancelled (`finishedAt = now`) first;
   * - otherwise the run is created `pending`, attempt 1, `readyAt = now`, fence 0,
   *   and the cursor moves (`created`).
   * Sets `lastScheduleTime` to the new cursor whenever the cursor moves. Notifies
   * `run-ready` for a created run and `run-finished` for each cancelled one.
   */
  scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult>;
  /** Atomic. Creates a run if no run has its ID (manual triggers). Notifies `run-ready` when created. */
  createRun(input: CreateRunInput): Promise<CreateRunResult>;
  /** Atomic. Appends a backfill range to the job. Notifies `job-changed`. Resolves `undefined` when the job is missing. */
  addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined>;
  /**
   * Atomic: create the next run of a backfill and advance it. Refused (`blocked`)
   * while another backfill run of the job is active, so a backfill runs one tick
   * at a time. The range is dropped once `next` is absent.
   */
  scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult>;

  /** Pending runs ready to claim. Not atomic: a claim decides. */
  findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult>;
  /**
   * Atomic: claim a pending run whose `readyAt <= now`: status `running`, owner,
   * `leaseUntil`, fence + 1, `startedAt` and `deadlineAt` set if not yet set.
   * Resolves `undefined` when the run is not claimable (gone, not pending, not ready).
   */
  claimRun(input: ClaimRunInput): Promise<RunRecord | undefined>;
  /** Atomic, fenced: extends the lease while the run is `running` under this owner and fence. */
  renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult>;
  /**
   * Atomic, fenced: records how an attempt ended, only while the run is `running`
   * under this owner and fence. Final outcomes set `finishedAt`, update the job's
   * counters (`succeeded`/`failed`, `lastSuccessfulTime = now` on success), prune
   * history beyond the job's limits (oldest finished first, failed and cancelled
   * counted together) and notify `run-finished`; `retry` and `released` notify
   * `run-ready`.
   */
  finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult>;
  /**
   * Atomic per run: every `running` run whose `leaseUntil < now` goes back to
   * `pending` with `attempt + 1`, `readyAt = now`, no owner, and an `error` named
   * `LeaseExpiredError`. Resolves the recovered runs: at most `limit`, the earliest
   * expired lease first (ties by ID). Notifies `run-ready`.
   */
  recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]>;

  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]>;

  /** Subscribes to notifications from every instance sharing the store; returns the unsubscribe function. */
  watch(listener: (notification: StoreNotification) => void): () => void;
}

/** A named lease with a fencing token: how instances elect one planner. */
export interface LockLease {
  readonly name: string;
  readonly owner: string;
  /** Increases every time the lock changes hands. */
  readonly token: number;
  readonly leaseUntil: number;
}

export interface Lock {
  /**
   * Atomic: takes the lock if it is free, expired (`leaseUntil <= now`) or already
   * held by `owner` (then it is renewed with the same token). A new holder gets the
   * previous token + 1. Resolves `undefined` while another owner holds it.
   */
  acquire(input: { readonly name: string; readonly owner: string; readonly now: number; readonly leaseUntil: number }): Promise<LockLease | undefined>;
  /** Atomic: extends the lease if `owner` still holds it with `token`; false otherwise. */
  renew(input: { readonly name: string; readonly owner: string; readonly token: number; readonly now: number; readonly leaseUntil: number }): Promise<boolean>;
  /** Atomic: frees the lock if `owner` holds it with `token`; otherwise does nothing. */
  release(input: { readonly name: string; readonly owner: string; readonly token: number }): Promise<void>;
}

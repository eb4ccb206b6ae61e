/**
 * What each method of the storage contract (src/store.ts) takes and resolves: the
 * inputs, queries and results of `JobStore` and `RunQueue`, and the batch sizes the
 * core sends (`UPSERT_BATCH`, `LIST_JOBS_PAGE`, `LIST_BATCH`). Re-exported by
 * store.ts, which is where to import them from; the methods' TSDoc there says what a
 * store does with each.
 */
import type {
  BackfillRange,
  IndexRecord,
  JobRecord,
  JobSpec,
  JsonValue,
  RunError,
  RunRecord,
  RunStatus,
  RunTrigger,
} from './store-records.js';

/** What the core asks a store to create; the store fills in status, attempt, fence and timestamps. */
export interface NewRun {
  readonly id: string;
  readonly jobName: string;
  readonly scheduledAt: number;
  readonly trigger: RunTrigger;
  readonly data?: JsonValue;
  /**
   * When the run may be claimed: the store keeps it as it is. The core decides it
   * (`readyAtOf` in planner.ts): `now` for a manual or backfill run, and for a
   * scheduled run the later of `now` and its tick (its jittered time, with the job's
   * `jitterMs`), so a run created ahead of its tick is ready at the tick.
   */
  readonly readyAt: number;
  /**
   * The W3C `traceparent` of the `trigger()` or `backfill()` call that asked for the
   * run (telemetry on, called inside a span). The store keeps it with the run, as it
   * keeps `data`, so that the run's span links to the caller's trace on whichever
   * instance executes it.
   */
  readonly traceparent?: string;
}

export interface UpsertJobInput {
  readonly spec: JobSpec;
  readonly now: number;
  /** The cursor of a job created by this call (ignored when the job exists: its cursor is kept). */
  readonly initialCursor: number;
  /** When given, sets the shared suspend flag; when absent, a new job starts active and an existing one keeps its flag. */
  readonly suspended?: boolean;
}

export interface UpsertJobResult {
  readonly job: JobRecord;
  /** True when the job did not exist. */
  readonly created: boolean;
  /** Present when the input suspended an existing job that had runs created ahead of a tick still to come: those runs, cancelled as `setSuspended` cancels them. */
  readonly cancelled?: readonly RunRecord[];
}

/** The most inputs the scheduler hands one `upsertJobs` call. */
export const UPSERT_BATCH = 500;

/** A page of `listJobs`: keyset pagination by name. */
export interface ListJobsQuery {
  /** Only jobs whose name comes after this one (code-point order). */
  readonly after?: string;
  /** At most this many jobs (a whole number, at least 1). */
  readonly limit?: number;
}

/** Jobs per `listJobs` page when the scheduler reads every job (its planner's load, a start's sync). */
export const LIST_JOBS_PAGE = 1_000;

export interface SetSuspendedInput {
  readonly name: string;
  readonly suspended: boolean;
  readonly now: number;
}

export interface SetSuspendedResult {
  readonly job: JobRecord;
  /** The runs created ahead of their tick that suspending cancelled, oldest tick first. */
  readonly cancelled: readonly RunRecord[];
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
  /** `CatchUp` or `BufferOne` with an active run: nothing written; plan again when that run finishes. */
  | { readonly outcome: 'blocked'; readonly job: JobRecord; readonly active: readonly string[] }
  /** No run was asked for: the cursor advanced. */
  | { readonly outcome: 'advanced'; readonly job: JobRecord }
  /** Nothing written: the job is missing, suspended, its cursor is not `expectedCursor`, or a run was asked past `maxRuns`. */
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
  /**
   * Claimable runs (see `claimRun`: pending plain runs, and fan-out runs with a
   * waiting index and fewer than `parallelism` running, even while `running`) with
   * `readyAt <= now`, oldest `readyAt` first (ties: `scheduledAt`, then `id`).
   */
  readonly runs: readonly RunRecord[];
  /** The earliest `readyAt > now` among claimable runs of those jobs, to wake up for. */
  readonly nextReadyAt?: number;
}

/** What a claim hands out: the run, and for a fan-out run the index now leased to the caller. */
export interface Claim {
  /** The run after the claim. For a plain run, its lease and fence are the caller's. */
  readonly run: RunRecord;
  /** Fan-out runs only: the claimed index, `running` under the caller's lease and fence. */
  readonly index?: IndexRecord;
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
  /**
   * Fan-out runs: the index whose lease this is (a plain run's lease otherwise).
   * Required for a fan-out run and refused for a plain one: a call without it on a
   * fan-out run, or with it on a plain run, is fenced out.
   */
  readonly index?: number;
  readonly owner: string;
  readonly fence: number;
  readonly now: number;
}

export interface RenewLeaseInput extends LeaseInput {
  readonly leaseUntil: number;
}

export type RenewLeaseResult =
  | { readonly ok: true }
  /**
   * The lease is gone: the run (or index) finished, was cancelled or recovered by
   * another owner, or was deleted. Its status, if it exists: the run's without
   * `index`, the index record's with `index` (absent when the index has no record).
   */
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
  /** `index`: fan-out runs only, the index after the write. */
  | { readonly ok: true; readonly run: RunRecord; readonly index?: IndexRecord }
  /** Fenced out: the caller no longer owns the run (or index); nothing written. */
  | { readonly ok: false; readonly run?: RunRecord };

export interface RecoverExpiredRunsInput {
  readonly now: number;
  readonly limit: number;
}

export interface ExpireInput {
  readonly now: number;
  readonly limit: number;
}

export interface ExpirePendingRunsResult {
  /** The runs failed by this call, earliest `pendingUntil` first (ties by ID). */
  readonly runs: readonly RunRecord[];
  /** The earliest `pendingUntil` still set after this call, to wake up for. */
  readonly nextAt?: number;
}

/** `sweepRuns`: what `recoverExpiredRuns`, `expirePendingRuns` and `deleteExpiredRuns` resolve, in that order. */
export interface SweepRunsResult {
  readonly recovered: readonly RunRecord[];
  readonly expired: ExpirePendingRunsResult;
  readonly deleted: number;
}

export interface ListRunsQuery {
  readonly jobName: string;
  readonly statuses?: readonly RunStatus[];
  /** At most this many, newest (`createdAt`, then `scheduledAt`, then `id`, descending) first. */
  readonly limit?: number;
}

/** Several jobs' runs at once (`Store.listRunsOfJobs`). */
export interface ListRunsOfJobsQuery {
  /** The jobs whose runs to list; unknown names contribute nothing. */
  readonly jobNames: readonly string[];
  /** Only runs with one of these statuses; all when absent. */
  readonly statuses?: readonly RunStatus[];
}

/** How many job names `scheduler.listJobs()` hands `Store.listRunsOfJobs` at once. */
export const LIST_BATCH = 1_000;

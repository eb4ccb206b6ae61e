/**
 * The records of the storage contract (src/store.ts): jobs as stores keep them,
 * runs, fan-out index records, and the errors stores write. Re-exported by
 * store.ts, which is where to import them from.
 */
import type { ScheduleSpec } from './schedule/types.js';

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace' | 'CatchUp' | 'BufferOne';
export type RunStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type RunTrigger = 'schedule' | 'manual' | 'backfill';
/** Statuses in which a run counts as active for concurrency policies. */
export const ACTIVE_STATUSES: readonly RunStatus[] = ['pending', 'running'];

/** Any JSON value: what `data` may hold, and what stores persist as-is. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A schedule in its stored form (defined by `schedule/`, which owns its types). */
export type { ScheduleSpec };

/**
 * How a fan-out job splits each run: `completions` indices (2 or more), at most
 * `parallelism` of them running at once across all instances.
 */
export interface FanOutSpec {
  readonly completions: number;
  /** 1 to `completions`. */
  readonly parallelism: number;
}

/** A fan-out run's shape (fixed when the run is created) and its counts (kept by the store). */
export interface FanOutState extends FanOutSpec {
  /** The job's `retryLimit` when the run was created: failed index attempts allowed over the whole run (absent: not limited). */
  readonly retryLimit?: number;
  /** Indices that succeeded. */
  readonly succeeded: number;
  /** Failed index attempts so far (lost leases included); the run fails once this exceeds `retryLimit`. */
  readonly failed: number;
  /** Indices `running` now. */
  readonly active: number;
}

/** Finished runs kept per job. */
export interface HistoryLimits {
  readonly succeeded: number;
  /** Failed and cancelled runs, counted together. */
  readonly failed: number;
  /** Finished runs are deleted this long after they finished (`expiresAt`), whatever the counts. */
  readonly ttlMs?: number;
}

/** The parts of a job definition a store keeps, so that any instance can plan and report the job. */
export interface JobSpec {
  readonly name: string;
  readonly schedule: ScheduleSpec;
  readonly timezone: string;
  readonly concurrencyPolicy: ConcurrencyPolicy;
  readonly startingDeadlineMs?: number;
  /**
   * How many failed attempts a run may have and still be retried (the job's
   * `retry.limit`; 0 for `retry: false`). The store decides with it, for every kind of
   * run (see `withinRetryLimit` in store-rules.ts): a plain run whose attempt `n` fails
   * (its handler's failure, or a lease that expired) is retried while `n <= retryLimit`
   * (the job's current spec), and a fan-out run while its failed index attempts, this
   * one included, are at most its `fanOut.retryLimit` (this value, copied when the run
   * was created). Absent (a job written before the spec had it): runs are not limited.
   */
  readonly retryLimit?: number;
  /** Present for fan-out jobs only; copied into each run the store creates for the job. */
  readonly fanOut?: FanOutSpec;
  /** A claimable run that nobody claims for this long fails (`pendingUntil`, see `expirePendingRuns`). */
  readonly pendingTimeoutMs?: number;
  /** The store prunes beyond the counts on every finish, and deletes by age with `deleteExpiredRuns`. */
  readonly history: HistoryLimits;
  /** The window: no tick before `startAt` or after `endAt` (inclusive bounds) becomes a run. Planned by the core. */
  readonly startAt?: number;
  readonly endAt?: number;
  /** Each scheduled run is ready up to this long after its tick (`NewRun.readyAt`); planned by the core. */
  readonly jitterMs?: number;
  /** `scheduleRun` creates no run once `scheduledRuns` has reached this. */
  readonly maxRuns?: number;
}

/** A pending backfill: ticks from `next` to `to` (inclusive) still to be run, oldest first. */
export interface BackfillRange {
  readonly id: string;
  /** The next tick to create a run for. */
  readonly next: number;
  /** The last tick of the range (inclusive). */
  readonly to: number;
  /** The `backfill()` caller's W3C `traceparent`: the store keeps it with the range, and the core copies it into each run it creates. */
  readonly traceparent?: string;
}

export interface JobRecord extends JobSpec {
  readonly suspended: boolean;
  readonly createdAt: number;
  /**
   * The planning position: ticks at or before it have been dealt with (run, skipped
   * or missed). Set by `upsertJobs` when the job is created, then only moved forward
   * by `scheduleRun`.
   */
  readonly cursor: number;
  /** The cursor's value once the planner has moved it at least once. */
  readonly lastScheduleTime?: number;
  readonly lastSuccessfulTime?: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
  /**
   * Scheduled runs `scheduleRun` created over the job's life (manual and backfill runs
   * not counted): 0 when the job is created, + 1 atomically with each created run,
   * kept on re-registration. `maxRuns` is checked against it.
   */
  readonly scheduledRuns: number;
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
  /** The creating call's W3C `traceparent` (`NewRun.traceparent`), kept as given. */
  readonly traceparent?: string;
  /** Instance holding the lease while `running`. */
  readonly owner?: string;
  readonly leaseUntil?: number;
  /** Fencing token: incremented by every claim; stale owners' writes are refused. */
  readonly fence: number;
  /** Whole-run deadline (`timeout`), fixed when the run first starts. */
  readonly deadlineAt?: number;
  /**
   * Fan-out runs only (the job had `fanOut` when the run was created). Such a run is
   * executed index by index (`IndexRecord`); the run's own `owner`, `leaseUntil` and
   * `fence` stay unset/0, its `attempt` stays 1, its status is `running` while any
   * index runs and `pending` otherwise, and `readyAt` is the earliest `readyAt` of
   * its waiting indices (a never-started index is ready from the run's `createdAt`);
   * while no index waits, `readyAt` keeps its last value. The run's `error` is set
   * only when the run itself fails (index errors stay on the index records). Once
   * the run is finished, `fanOut.active` is 0.
   */
  readonly fanOut?: FanOutState;
  /** Set while the run is claimable and its job has `pendingTimeoutMs`: when it fails unclaimed. */
  readonly pendingUntil?: number;
  /** Set when the run finishes if its job has `history.ttlMs`: when `deleteExpiredRuns` deletes it. */
  readonly expiresAt?: number;
}

export type IndexStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * One index of a fan-out run, claimed, leased and fenced like a plain run. Its ID is
 * `${runId}.${index}` (`indexId()`), so a re-claim adopts the existing record. A
 * record exists from the index's first claim on; a never-started index has none.
 */
export interface IndexRecord {
  readonly runId: string;
  /** 0 to `completions − 1`. */
  readonly index: number;
  readonly status: IndexStatus;
  /** This index's attempt: 1, 2, ... (retries and lost leases add one). */
  readonly attempt: number;
  /** When a pending index may be claimed again (retry, release, recovery). */
  readonly readyAt: number;
  /** First start. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** The last failed attempt's error: kept while the index waits or runs again, cleared when it succeeds (as a plain run's). */
  readonly error?: RunError;
  readonly owner?: string;
  readonly leaseUntil?: number;
  readonly fence: number;
}

/** The ID of index `index` of run `runId`. */
export function indexId(runId: string, index: number): string {
  return `${runId}.${index}`;
}

/** The error a run gets when it times out unclaimed. */
export const PENDING_TIMEOUT_ERROR: RunError = {
  name: 'PendingTimeoutError',
  message: 'no instance started the run within its pendingTimeout',
};

/** The error a run (or index) gets when its owner's lease expires. */
export const LEASE_EXPIRED_ERROR: RunError = { name: 'LeaseExpiredError', message: 'lease expired' };

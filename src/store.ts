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
 * Every instant and every duration (the `*Ms` fields) the core hands a store is a
 * whole number of milliseconds: the scheduler normalizes them at its public
 * boundary and reads a custom clock through a view that floors `now()`, so a
 * store may keep them in 64-bit integer columns and must never see a fraction.
 * Instants lie within the `Date` range (±8.64e15 ms), durations within 100 years.
 * `data` is JSON (at most 64 levels deep) that nobody else holds a reference to:
 * a store may keep the object itself, as the memory store does.
 *
 * What each method takes and resolves is in store-calls.ts, the records in
 * store-records.ts; this module re-exports both.
 *
 * Stores reject with whatever their client throws; the scheduler wraps failures
 * in `StoreError` and reports them. Lists of runs inside results (`active`,
 * `cancelled`) are ordered oldest first (`compareOldestFirst` in store-rules.ts).
 *
 * `Store` is the sum of capabilities: `StoreLifecycle`, `JobStore` and `RunQueue`
 * (required), `StoreNotifications` and `LockProvider` (optional: the core polls at its
 * heartbeat without notifications, and takes the scheduler's `lock` option without a
 * store lock). `tickwork/testing` exports `storeConformance()`, and per capability
 * `describeJobStore`, `describeRunQueue`, `describeNotifications` and `describeLock`,
 * which prove a store against this contract; every method's TSDoc below is what that
 * suite checks.
 */
import type { IndexRecord, JobRecord, RunRecord, RunStatus } from './store-records.js';
import type {
  AddBackfillInput,
  Claim,
  ClaimRunInput,
  CreateRunInput,
  CreateRunResult,
  ExpireInput,
  ExpirePendingRunsResult,
  FindReadyRunsInput,
  FindReadyRunsResult,
  FinishAttemptInput,
  FinishAttemptResult,
  ListJobsQuery,
  ListRunsOfJobsQuery,
  ListRunsQuery,
  RecoverExpiredRunsInput,
  RenewLeaseInput,
  RenewLeaseResult,
  ScheduleBackfillRunInput,
  ScheduleBackfillRunResult,
  ScheduleRunInput,
  ScheduleRunResult,
  SetSuspendedInput,
  SetSuspendedResult,
  SweepRunsResult,
  UpsertJobInput,
  UpsertJobResult,
} from './store-calls.js';

export * from './store-records.js';
export * from './store-calls.js';
export { partitionOf, fnv1a32, MAX_PARTITIONS } from './partition.js';

/** Change notifications a store sends to every instance watching it. Hints, not a log: they may be lost. */
export type StoreNotification =
  /**
   * A write left a run claimable, at its `readyAt`: created, retried, released or
   * recovered, and for a fan-out run also a claim or an index's finish that leaves
   * another index to claim. `pendingUntil`: the run's after the write, when it has one
   * (the planner's pending-timeout timer reads it rather than working it out).
   */
  | { readonly type: 'run-ready'; readonly jobName: string; readonly runId: string; readonly readyAt: number; readonly pendingUntil?: number }
  /** A run finished (succeeded, failed or cancelled). */
  | { readonly type: 'run-finished'; readonly jobName: string; readonly runId: string; readonly status: RunStatus }
  /** A job was created, changed, suspended, resumed, removed, or given a backfill. */
  | { readonly type: 'job-changed'; readonly jobName: string };

/**
 * What a store does when it is created and closed, and how the core tells that it
 * lost its data. Every store implements `init` and `close` (empty when there is
 * nothing to open); `identity` is optional.
 */
export interface StoreLifecycle {
  /** Creates tables / loads scripts (idempotent, safe to race). Called by the scheduler on start. */
  init(): Promise<void>;
  /** Releases what the store opened itself (never a client the user passed in). */
  close(): Promise<void>;
  /**
   * Optional. The identity of the data the store holds: made when that data is first
   * written (or asked for) and the same for as long as it lives; a store that lost its
   * data (a Redis restarted empty, a Postgres schema dropped and created again) answers
   * with a new one. Resolves `undefined` when it cannot tell. The scheduler asks on
   * every heartbeat, and when the answer changes it writes the jobs it registered
   * again and reports `STORE_RESET`: without it, a store that loses its data loses
   * every job for good, silently.
   */
  identity?(): Promise<string | undefined>;
  /**
   * Optional, with `identity`. Calls `listener` when the identity may have changed (the
   * scheduler checks it then), with `pushed`: whether the store calls it again at the
   * next change. While it does, the scheduler checks the identity only on its
   * heartbeats, not every 2 s between them. Returns the function that stops the calls.
   * The Redis store pushes while it is watched, on a server with client tracking.
   */
  watchIdentity?(listener: (pushed: boolean) => void): () => void;
}

/**
 * Jobs and their cursors (required): the registry of jobs, the shared suspend flag,
 * and the atomic steps that create runs (a planned tick under the job's concurrency
 * policy, a manual trigger, a backfill's next tick). Conformance: `describeJobStore`.
 */
export interface JobStore {
  /**
   * Upserts jobs in order, each atomically (a store may apply the whole batch in one
   * transaction; it need not). For each input: creates the job with
   * `initialCursor`, zero counters and no backfills, or replaces an existing job's
   * spec as a whole (a field absent from the new spec is removed), keeping its
   * cursor, counters, history and backfills; sets `suspended` only when given
   * (suspending an existing job cancels its runs created ahead of a tick still to
   * come, at the input's `now`, as `setSuspended` does, and the result lists them in
   * `cancelled`); notifies `job-changed`. Resolves one result per input, in order. The scheduler
   * sends at most `UPSERT_BATCH` inputs per call, so a restart that changes 100,000
   * jobs costs hundreds of store calls, not 100,000.
   */
  upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]>;
  getJob(name: string): Promise<JobRecord | undefined>;
  /**
   * Jobs by name, in code-point order: every job without a query; with one, a page of
   * keyset pagination (the jobs after `after`, at most `limit` of them), read without
   * loading the others. The scheduler reads every job in pages of `LIST_JOBS_PAGE`, so
   * a store of a million jobs is never held in one reply.
   */
  listJobs(query?: ListJobsQuery): Promise<readonly JobRecord[]>;
  /** Atomic. Deletes the job, all its runs (with their index records) and backfills. Notifies `job-changed`. Resolves false when absent. */
  removeJob(name: string): Promise<boolean>;
  /**
   * Atomic. Sets the shared suspend flag. Suspending also cancels (`finishedAt =
   * now`, history kept and pruned as for any finished run) the job's runs created
   * ahead of a tick that is still to come (`trigger` `schedule`, `pending`,
   * `scheduledAt > now`): a suspended job starts no run for a tick after the
   * suspension. Notifies `job-changed`, and `run-finished` for each cancelled run.
   * Resolves `undefined` when the job is missing.
   */
  setSuspended(input: SetSuspendedInput): Promise<SetSuspendedResult | undefined>;

  /**
   * Atomic: create a scheduled run and advance the cursor, under the job's
   * concurrency policy. With `expectedCursor` matching and the job not suspended:
   * - no `run`: the cursor moves (`advanced`);
   * - `run.id` exists: the cursor moves, nothing else (`exists`);
   * - the job has `maxRuns` and `scheduledRuns >= maxRuns`: nothing written (`conflict`);
   * - `Forbid` with an active run: `skipped` + 1 and the cursor moves (`skipped`);
   * - `CatchUp` or `BufferOne` with an active run: nothing written (`blocked`);
   * - `Replace`: every active run is cancelled (`finishedAt = now`) first;
   * - otherwise the run is created `pending`, attempt 1, fence 0, at `run.readyAt`
   *   as given, with `fanOut` (the job's shape and `retryLimit`, counts at 0) when the
   *   job has `fanOut` and `pendingUntil` when it has `pendingTimeoutMs`,
   *   `scheduledRuns` + 1, and the cursor moves (`created`). (`createRun` and
   *   `scheduleBackfillRun` create runs the same way, without counting them.)
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
}

/**
 * The run queue and its leases (required): finding and claiming ready runs (a plain
 * run, or a fan-out run's next index), fenced lease renewals and endings, and the
 * planner's housekeeping (expired leases, pending timeouts, history TTL), plus reads.
 * Conformance: `describeRunQueue`.
 */
export interface RunQueue {
  /** Claimable runs ready to claim (see `FindReadyRunsResult`). Not atomic: a claim decides. */
  findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult>;
  /**
   * Atomic: claim a claimable run whose `readyAt <= now`. `startedAt` and
   * `deadlineAt` are set on the run if not yet set.
   * - A plain run is claimable while `pending`: it becomes `running` with owner,
   *   `leaseUntil`, fence + 1.
   * - A fan-out run is claimable while not finished, `fanOut.active < parallelism`
   *   and an index waits (never started, or its record is `pending`). The claim
   *   takes the waiting index with the earliest `readyAt` (a never-started index is
   *   ready from the run's `createdAt`), ties by lowest index, if that `readyAt <=
   *   now`: its record (created at attempt 1, fence 0, `readyAt` the run's
   *   `createdAt`, or adopted as it is) becomes `running` with owner, `leaseUntil`,
   *   fence + 1, `startedAt` if not yet set; `fanOut.active` + 1; the run becomes
   *   `running` and its `readyAt` follows its waiting indices.
   * Resolves `undefined` when nothing is claimable (gone, finished, not ready, or
   * `parallelism` indices running).
   *
   * A claim that leaves a fan-out run claimable notifies `run-ready` with its new
   * `readyAt`.
   *
   * `pendingUntil` rule (every write to a run, this one included): a write that
   * leaves the run claimable sets `pendingUntil = max(readyAt, now) +
   * pendingTimeoutMs` when its job has `pendingTimeoutMs`; a write that leaves it
   * not claimable removes `pendingUntil`. `readyAt` is the run's after the write;
   * `pendingTimeoutMs` is the job's current spec. The writes to a run are its
   * creation, claims, `finishAttempt` (of the run or of any of its indices),
   * recovery, cancellation and expiry; renewing a lease (of the run or of an index)
   * leaves `pendingUntil` as it is.
   */
  claimRun(input: ClaimRunInput): Promise<Claim | undefined>;
  /** Atomic, fenced: extends the lease while the run (or `index`) is `running` under this owner and fence. */
  renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult>;
  /**
   * Atomic, fenced: records how an attempt ended, only while the run (or `index`)
   * is `running` under this owner and fence.
   *
   * A plain run: final outcomes set `finishedAt`, update the job's counters
   * (`succeeded`/`failed`, `lastSuccessfulTime = now` on success), prune history
   * beyond the job's limits (oldest finished first, failed and cancelled counted
   * together) and notify `run-finished`. `retry` is a failed attempt: within the
   * job's `retryLimit` (`withinRetryLimit(run.attempt, retryLimit)`, the job's current
   * spec) the run goes back to `pending` with `attempt + 1`, the given `readyAt` and
   * `error`; beyond it, the run fails with that error as `failed` does. `retry` within
   * the limit and `released` notify `run-ready`.
   *
   * An index (`index` given): the index's owner and lease are cleared and
   * `fanOut.active` − 1, then
   * - `succeeded`: the index `succeeded` (`finishedAt`), `fanOut.succeeded` + 1;
   *   when it reaches `completions` the run succeeds as a plain run does;
   * - `retry`: `fanOut.failed` + 1; within the run's `fanOut.retryLimit`
   *   (`withinRetryLimit(fanOut.failed, fanOut.retryLimit)`) the index goes back to
   *   `pending` with `attempt + 1`, the given `readyAt` and `error`; beyond it, as
   *   `failed` below;
   * - `failed`: the index `failed` (`finishedAt`, `error`), `fanOut.failed` + 1, and
   *   the run fails with that error as a plain run does;
   * - `released`: the index goes back to `pending`, same attempt, `readyAt = now`.
   * A fan-out run that ends `failed` or `cancelled` (here, by Replace, by recovery or
   * by pending timeout) turns each of its index records not yet finished into
   * `cancelled` (`finishedAt = now`, lease cleared), so their owners are fenced out;
   * its `fanOut.active` becomes 0. Whenever the run is left claimable it notifies
   * `run-ready` with its `readyAt`.
   */
  finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult>;
  /**
   * Atomic per run: every `running` run or index whose `leaseUntil < now` is
   * recovered. The lost attempt counts as a failed one: `finishAttempt` with outcome
   * `retry` at `readyAt = now` and `LEASE_EXPIRED_ERROR`, so a plain run goes back to
   * `pending` with `attempt + 1` and no owner, or fails once its attempts exceed the
   * job's `retryLimit`, and a fan-out run fails once `fanOut.failed` exceeds its
   * `retryLimit`. Resolves the runs after recovery (one entry per recovered run or
   * index): at most `limit`, the earliest expired lease first (ties by run ID, then
   * index; a plain run has no index and comes first). An expired index whose run an
   * earlier recovery of the same call failed is not recovered (its record is
   * `cancelled` by then) and has no entry. Notifies `run-ready` (or `run-finished`).
   */
  recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]>;
  /**
   * Atomic per run: every claimable run whose `pendingUntil <= now` fails with
   * `PENDING_TIMEOUT_ERROR`, as a final failure does in `finishAttempt` (counters,
   * pruning, `expiresAt`, cancelled index records, `run-finished`; `fanOut.failed`
   * is not counted: no index attempt failed). At most `limit`, earliest
   * `pendingUntil` first (ties by ID).
   */
  expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult>;
  /**
   * Atomic per run: deletes finished runs whose `expiresAt <= now`, with their index
   * records; at most `limit`, earliest `expiresAt` first (ties by ID). Resolves how
   * many it deleted. (Every final write sets `expiresAt = finishedAt +
   * history.ttlMs` when the job's current spec has a TTL.)
   */
  deleteExpiredRuns(input: ExpireInput): Promise<number>;
  /**
   * Optional: `recoverExpiredRuns`, `expirePendingRuns` and `deleteExpiredRuns` with
   * the same `now` and `limit`, in that order, in one call: each result exactly what
   * that call would resolve after the ones before it. The housekeeping sweeps every
   * heartbeat: three calls without it, one with it (one round trip for a networked store).
   */
  sweepRuns?(input: ExpireInput): Promise<SweepRunsResult>;

  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]>;
  /**
   * Optional: the runs of every job in `query.jobNames` (those with a status in
   * `query.statuses` when given) in one round trip, grouped by job in the order of
   * `jobNames`, each job's newest first as in `listRuns`. `scheduler.listJobs()` asks
   * it for the active runs of `LIST_BATCH` jobs at a time, the dashboard's jobs page
   * for all the runs of the jobs it shows; a store without it is asked `listRuns`
   * once per job.
   */
  listRunsOfJobs?(query: ListRunsOfJobsQuery): Promise<readonly RunRecord[]>;
  /** The index records of a fan-out run (indices started at least once), by index. */
  listIndices(runId: string): Promise<readonly IndexRecord[]>;
}

/**
 * Change notifications (optional as a whole: `Store` has `Partial<StoreNotifications>`).
 * Without `watch`, each instance finds new work and other instances' job changes on
 * its heartbeat (every `leaseMs / 3`) by polling the store: correct, only later.
 * Conformance: `describeNotifications`.
 */
export interface StoreNotifications {
  /** Subscribes to notifications from every instance sharing the store; returns the unsubscribe function. */
  watch(listener: (notification: StoreNotification) => void): () => void;
  /**
   * Optional. Resolves once every notification of the calls through this store that
   * have resolved so far has been handed to its watchers (at once when nobody
   * watches; after a short real-time wait at most when the subscription is down, as
   * those notifications are lost anyway). Never rejects. A store whose
   * notifications travel over the network (pub/sub, LISTEN/NOTIFY) implements it,
   * so that under a test clock (`Clock.track`) a store call is not done until what
   * it set off is: the scheduler awaits it after every call that notifies. A store
   * that hands its notifications to watchers before its calls resolve (the memory
   * store) needs none.
   */
  flushNotifications?(): Promise<void>;
}

/**
 * The lock that elects the planner (optional on a store: `Store` has
 * `Partial<LockProvider>`). A store without `lock()` runs only under a scheduler given
 * `lock` in its options. Conformance: `describeLock`.
 */
export interface LockProvider {
  /** The store's own lock adapter, used to elect the planner unless the scheduler is given another. */
  lock(): Lock;
  /**
   * Optional: how many partitions the store's jobs fall into (1 when absent), fixed
   * for the store's life: job `name` belongs to `partitionOf(name, partitions)`, and
   * each partition has its own planner lease, so instances share the planning out.
   * Every instance sharing a store must be given the same count.
   */
  readonly partitions?: number;
}

/**
 * The whole contract: what `new Scheduler({ store })` takes. Required: `StoreLifecycle`
 * (`init`, `close`), `JobStore` and `RunQueue`; optional: `identity`,
 * `listRunsOfJobs`, `sweepRuns`, notifications (`watch`, `flushNotifications`) and `lock()`. The
 * core checks each optional method where it would call it and does without.
 */
export interface Store extends StoreLifecycle, JobStore, RunQueue, Partial<StoreNotifications>, Partial<LockProvider> {}

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
  /**
   * Optional: `renew` of each lease in `leases` (to the same `leaseUntil`), atomic per
   * lease, in one call: one answer per lease, in order (true: renewed). An instance
   * of a store with several partitions holds a lease per partition it plans, and
   * renews them all every heartbeat; without it, that is one `renew` call each.
   */
  renewAll?(input: {
    readonly leases: readonly { readonly name: string; readonly owner: string; readonly token: number }[];
    readonly now: number;
    readonly leaseUntil: number;
  }): Promise<readonly boolean[]>;
  /** Atomic: frees the lock if `owner` holds it with `token`; otherwise does nothing. */
  release(input: { readonly name: string; readonly owner: string; readonly token: number }): Promise<void>;
  /**
   * Optional: the live leases (`leaseUntil > now`) whose names start with `prefix`, in
   * any order. A store of several partitions (`Store.partitions`) needs it to share
   * them out: the scheduler counts the instances taking part in planning and sees which
   * partitions are free. Without it, an instance takes every partition it can get, so
   * the first one to start plans every job (as with one partition).
   */
  list?(input: { readonly prefix: string; readonly now: number }): Promise<readonly LockLease[]>;
}

/**
 * The in-process store: jobs, cursors, runs and leases in plain maps. Every method
 * runs synchronously to completion before its promise resolves, which is what
 * makes each one atomic; several schedulers sharing one instance behave like
 * several processes sharing a Redis or Postgres store. Records are replaced, never
 * mutated, so a record handed out is a stable snapshot.
 *
 * The reference store for adapter authors, by capability of the contract:
 * - `StoreLifecycle` and `JobStore` (jobs, cursors, run creation under the
 *   concurrency policies, backfills): this file;
 * - `RunQueue`: the reads here, the rest (claims, leases, endings, recovery, pending
 *   timeouts, history) in `run-lifecycle.ts`;
 * - `StoreNotifications` and the maps, with every write of a run (the `pendingUntil`
 *   rule, `run-ready`): `memory-tables.ts`;
 * - `LockProvider`: `memory-lock.ts`.
 * The rules every store shares come from `store-rules.ts` (`tickwork/store`). Records
 * are built plainly (`{ ...record, field }`) except on the paths the benchmark shows
 * hot, which copy them field by field (`memory-records.ts` says why, with figures).
 */
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
  IndexRecord,
  JobRecord,
  ListJobsQuery,
  ListRunsOfJobsQuery,
  ListRunsQuery,
  Lock,
  NewRun,
  RecoverExpiredRunsInput,
  RenewLeaseInput,
  RenewLeaseResult,
  RunRecord,
  RunStatus,
  ScheduleBackfillRunInput,
  ScheduleBackfillRunResult,
  ScheduleRunInput,
  ScheduleRunResult,
  SetSuspendedInput,
  SetSuspendedResult,
  Store,
  StoreNotification,
  UpsertJobInput,
  UpsertJobResult,
} from '../../src/store.js';
import { compareNewestFirst, compareOldestFirst, compareReadyOrder, isCreatedAhead } from '../../src/store-rules.js';
import { MemoryLock } from './memory-lock.js';
import * as z from 'zod/mini';
import { parseInput, partitionsSchema, type Draft } from '../../src/adapter-kit.js';
import { MemoryTables } from './memory-tables.js';
import * as lifecycle from './run-lifecycle.js';

const NO_RUNS: readonly RunRecord[] = Object.freeze([]);

/** Options of `new MemoryStore(...)`. */
export interface MemoryStoreOptions {
  /**
   * How many partitions the jobs fall into (1 to 1,024): schedulers sharing this store
   * share the planning out, one planner lease per partition (as instances sharing a
   * Redis or Postgres store do).
   * @default 1
   */
  readonly partitions?: number;
}

const optionsSchema = z.optional(z.strictObject({ partitions: partitionsSchema }));

export class MemoryStore implements Store {
  readonly #tables = new MemoryTables();
  readonly #lock = new MemoryLock();
  /** How many partitions the jobs fall into (`Store.partitions`). */
  readonly partitions: number;

  /** @throws ValidationError when the options are invalid. */
  constructor(options?: MemoryStoreOptions) {
    this.partitions = parseInput(optionsSchema, options, 'new MemoryStore(options)')?.partitions ?? 1;
  }

  async init(): Promise<void> {}

  async close(): Promise<void> {}

  lock(): Lock {
    return this.#lock;
  }

  async upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]> {
    return inputs.map((input) => this.#upsertJob(input));
  }

  async getJob(name: string): Promise<JobRecord | undefined> {
    return this.#tables.job(name);
  }

  async listJobs(query: ListJobsQuery = {}): Promise<readonly JobRecord[]> {
    return this.#tables.jobsByName(query.after, query.limit);
  }

  async removeJob(name: string): Promise<boolean> {
    if (!this.#tables.deleteJob(name)) return false;
    this.#tables.notify({ type: 'job-changed', jobName: name });
    return true;
  }

  async setSuspended(input: SetSuspendedInput): Promise<SetSuspendedResult | undefined> {
    const { name, suspended, now } = input;
    const job = this.#tables.job(name);
    if (job === undefined) return undefined;
    const next = this.#tables.putJob({ ...job, suspended });
    const cancelled = suspended ? this.#cancelAhead(next, now) : [];
    this.#tables.notify({ type: 'job-changed', jobName: name });
    return { job: next, cancelled };
  }

  async scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult> {
    const job = this.#tables.job(input.jobName);
    if (job === undefined || job.suspended || job.cursor !== input.expectedCursor) {
      return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
    if (input.run === undefined) return { outcome: 'advanced', job: this.#advance(job, input) };
    const existing = this.#tables.run(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: this.#advance(job, input), run: existing };
    if (job.maxRuns !== undefined && job.scheduledRuns >= job.maxRuns) return { outcome: 'conflict', job };

    // Allow creates the run whatever else is active: only the other policies read the active runs.
    const active = job.concurrencyPolicy === 'Allow' ? NO_RUNS : this.#activeRuns(job.name);
    if (active.length > 0 && job.concurrencyPolicy === 'Forbid') {
      return { outcome: 'skipped', job: this.#advance(job, input, { skipped: job.skipped + 1 }), active: active.map((run) => run.id) };
    }
    if (active.length > 0 && (job.concurrencyPolicy === 'CatchUp' || job.concurrencyPolicy === 'BufferOne')) {
      return { outcome: 'blocked', job, active: active.map((run) => run.id) };
    }
    const cancelled =
      job.concurrencyPolicy === 'Replace' && active.length > 0
        ? active.map((run) => lifecycle.endRun(this.#tables, run, { status: 'cancelled' }, input.now))
        : [];
    const run = this.#insertRun(input.run, input.now, job);
    const advanced = this.#advance(job, input, { scheduledRuns: job.scheduledRuns + 1 });
    if (cancelled.length > 0) lifecycle.prune(this.#tables, advanced);
    return { outcome: 'created', job: advanced, run, cancelled };
  }

  async createRun(input: CreateRunInput): Promise<CreateRunResult> {
    const job = this.#tables.job(input.run.jobName);
    if (job === undefined) return { outcome: 'missing-job' };
    const existing = this.#tables.run(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', run: existing };
    return { outcome: 'created', run: this.#insertRun(input.run, input.now, job) };
  }

  async addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined> {
    const job = this.#tables.job(input.jobName);
    if (job === undefined) return undefined;
    const next = this.#tables.putJob({ ...job, backfills: [...job.backfills, input.range] });
    this.#tables.notify({ type: 'job-changed', jobName: job.name });
    return next;
  }

  async scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult> {
    const job = this.#tables.job(input.jobName);
    const [first, ...rest] = job?.backfills ?? [];
    if (job === undefined || job.suspended || first?.id !== input.backfillId || first.next !== input.expectedNext) {
      return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
    if (this.#activeRuns(job.name).some((run) => run.trigger === 'backfill')) return { outcome: 'blocked', job };
    const backfills = input.next === undefined ? rest : [{ ...first, next: input.next }, ...rest];
    const advanced = this.#tables.putJob({ ...job, backfills });
    const existing = this.#tables.run(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: advanced, run: existing };
    return { outcome: 'created', job: advanced, run: this.#insertRun(input.run, input.now) };
  }

  async findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult> {
    const ready: RunRecord[] = [];
    let nextReadyAt: number | undefined;
    for (const run of this.#tables.claimableRuns()) {
      if (!input.jobNames.has(run.jobName)) continue;
      if (run.readyAt <= input.now) ready.push(run);
      else if (nextReadyAt === undefined || run.readyAt < nextReadyAt) nextReadyAt = run.readyAt;
    }
    const runs = ready.sort(compareReadyOrder).slice(0, input.limit);
    return nextReadyAt === undefined ? { runs } : { runs, nextReadyAt };
  }

  async claimRun(input: ClaimRunInput): Promise<Claim | undefined> {
    return lifecycle.claimRun(this.#tables, input);
  }

  async renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult> {
    return lifecycle.renewLease(this.#tables, input);
  }

  async finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult> {
    return lifecycle.finishAttempt(this.#tables, input);
  }

  async recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]> {
    return lifecycle.recoverExpiredRuns(this.#tables, input);
  }

  async expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult> {
    return lifecycle.expirePendingRuns(this.#tables, input);
  }

  async deleteExpiredRuns(input: ExpireInput): Promise<number> {
    return lifecycle.deleteExpiredRuns(this.#tables, input);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.#tables.run(id);
  }

  async listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]> {
    const runs = this.#runsOf(query.jobName, query.statuses);
    return query.limit === undefined ? runs : runs.slice(0, query.limit);
  }

  async listRunsOfJobs(query: ListRunsOfJobsQuery): Promise<readonly RunRecord[]> {
    return [...new Set(query.jobNames)].flatMap((name) => this.#runsOf(name, query.statuses));
  }

  /** A job's runs (those with one of `statuses`, when given), newest first. */
  #runsOf(jobName: string, statuses: readonly RunStatus[] | undefined): RunRecord[] {
    return this.#tables
      .runsOf(jobName)
      .filter((run) => statuses === undefined || statuses.includes(run.status))
      .sort(compareNewestFirst);
  }

  async listIndices(runId: string): Promise<readonly IndexRecord[]> {
    return [...this.#tables.indices(runId)];
  }

  watch(listener: (notification: StoreNotification) => void): () => void {
    return this.#tables.watch(listener);
  }

  #upsertJob(input: UpsertJobInput): UpsertJobResult {
    const existing = this.#tables.job(input.spec.name);
    // The spec is replaced as a whole (a field dropped from the definition is dropped here too);
    // the job's state (flag, cursor, counters, times, backfills) is kept, or starts afresh.
    const job: JobRecord =
      existing === undefined
        ? { ...input.spec, suspended: input.suspended ?? false, createdAt: input.now, cursor: input.initialCursor, succeeded: 0, failed: 0, skipped: 0, scheduledRuns: 0, backfills: [] }
        : {
            ...input.spec,
            suspended: input.suspended ?? existing.suspended,
            createdAt: existing.createdAt,
            cursor: existing.cursor,
            ...(existing.lastScheduleTime === undefined ? {} : { lastScheduleTime: existing.lastScheduleTime }),
            ...(existing.lastSuccessfulTime === undefined ? {} : { lastSuccessfulTime: existing.lastSuccessfulTime }),
            succeeded: existing.succeeded,
            failed: existing.failed,
            skipped: existing.skipped,
            scheduledRuns: existing.scheduledRuns,
            backfills: existing.backfills,
          };
    this.#tables.putJob(job);
    const cancelled = existing !== undefined && input.suspended === true ? this.#cancelAhead(job, input.now) : [];
    this.#tables.notify({ type: 'job-changed', jobName: job.name });
    return cancelled.length === 0 ? { job, created: existing === undefined } : { job, created: false, cancelled };
  }

  /**
   * Suspending `job` (as just stored): cancels its runs created ahead of a tick still to
   * come, and prunes its history. A cancellation leaves the job's record as it is.
   */
  #cancelAhead(job: JobRecord, now: number): RunRecord[] {
    const ahead = this.#activeRuns(job.name).filter((run) => isCreatedAhead(run, now));
    const cancelled = ahead.map((run) => lifecycle.endRun(this.#tables, run, { status: 'cancelled' }, now));
    if (cancelled.length > 0) lifecycle.prune(this.#tables, job);
    return cancelled;
  }

  #activeRuns(jobName: string): RunRecord[] {
    const active = this.#tables.activeRunsOf(jobName);
    return active.length > 1 ? active.sort(compareOldestFirst) : active;
  }

  /** Moves the job's cursor to `input.cursor` (and sets the counts given). */
  #advance(job: JobRecord, input: ScheduleRunInput, counts?: { skipped?: number; scheduledRuns?: number }): JobRecord {
    // Re-read: cancellations under Replace update the job's record first.
    const current = this.#tables.job(job.name) ?? job;
    return this.#tables.putJob({ ...current, ...counts, cursor: input.cursor, lastScheduleTime: input.cursor });
  }

  /**
   * Creates a run as the contract says every store does: pending, attempt 1, fence 0,
   * ready at the `readyAt` the core gave, with the job's fan-out shape and retry limit
   * and counts at 0 for a fan-out job.
   */
  #insertRun(input: NewRun, now: number, job = this.#tables.job(input.jobName)): RunRecord {
    const fanOut = job?.fanOut;
    const run: Draft<RunRecord> = {
      id: input.id,
      jobName: input.jobName,
      scheduledAt: input.scheduledAt,
      trigger: input.trigger,
      status: 'pending',
      attempt: 1,
      createdAt: now,
      readyAt: input.readyAt,
      fence: 0,
    };
    if (input.data !== undefined) run.data = input.data;
    if (input.traceparent !== undefined) run.traceparent = input.traceparent;
    if (fanOut !== undefined) {
      run.fanOut =
        job?.retryLimit === undefined
          ? { completions: fanOut.completions, parallelism: fanOut.parallelism, succeeded: 0, failed: 0, active: 0 }
          : { completions: fanOut.completions, parallelism: fanOut.parallelism, retryLimit: job.retryLimit, succeeded: 0, failed: 0, active: 0 };
    }
    return this.#tables.insertRun(run, now);
  }
}

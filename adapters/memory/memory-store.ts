/**
 * The in-process store, and the reference store for adapter authors: jobs, cursors,
 * runs and leases in plain maps. Every method runs synchronously to completion before
 * its promise resolves, which is what makes each one atomic; several schedulers
 * sharing one instance behave like several processes sharing a Redis or Postgres
 * store. Records are replaced, never mutated, so a record handed out is a stable
 * snapshot.
 *
 * Read it against the contract (src/store.ts), capability by capability:
 * - `StoreLifecycle`, `LockProvider` (the lock itself: memory-lock.ts),
 *   `StoreNotifications` and `JobStore` (jobs, cursors, run creation under the
 *   concurrency policies, backfills): this file, in that order;
 * - `RunQueue` (claims, leases, endings, recovery, pending timeouts, history, reads):
 *   memory-run-queue.ts, which this class hands those methods to; it extends
 *   memory-runs.ts, where the runs are kept (every write of a run, with the
 *   `pendingUntil` rule).
 * The rules every store shares come from `store-rules.ts` (`tickwork/store`). Job
 * records are copied field by field (`jobRecord`: a spread gives each record a hidden
 * class of its own), and so are runs on the paths the benchmark shows hot
 * (memory-records.ts says why, with figures); other records are built plainly
 * (`{ ...record, field }`).
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
  RecoverExpiredRunsInput,
  RenewLeaseInput,
  RenewLeaseResult,
  RunRecord,
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
import { isCreatedAhead } from '../../src/store-rules.js';
import * as z from 'zod/mini';
import { jobRecord, parseInput, partitionsSchema } from '../../src/adapter-kit.js';
import { MemoryLock } from './memory-lock.js';
import { MemoryRunQueue } from './memory-run-queue.js';
import { NONE } from './memory-runs.js';

type Listener = (notification: StoreNotification) => void;

const DELIVERED = Promise.resolve();

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
  /** How many partitions the jobs fall into (`LockProvider.partitions`). */
  readonly partitions: number;
  readonly #lock = new MemoryLock();
  readonly #jobs = new Map<string, JobRecord>();
  /** Every job name in code-point order, built on demand for `listJobs` pages and dropped when a job comes or goes. */
  #names: string[] | undefined;
  readonly #listeners = new Set<Listener>();
  /**
   * Notifications on their way, oldest first from `#outboxHead`, each with the watchers
   * it goes to (one, or several): those watching when it was sent.
   */
  #outbox: (StoreNotification | Listener | readonly Listener[])[] = [];
  #outboxHead = 0;
  /** The runs, and the run queue's steps. */
  readonly #runs: MemoryRunQueue;

  /** @throws ValidationError when the options are invalid. */
  constructor(options?: MemoryStoreOptions) {
    this.partitions = parseInput(optionsSchema, options, 'new MemoryStore(options)')?.partitions ?? 1;
    this.#runs = new MemoryRunQueue(this.#jobs, this.#notify);
  }

  // StoreLifecycle: nothing to open or close.

  async init(): Promise<void> {}

  async close(): Promise<void> {}

  // LockProvider

  lock(): Lock {
    return this.#lock;
  }

  // StoreNotifications

  watch(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Delivered after the operation completes, as a real store's notifications are: one
   * microtask per notification, in order. A promise reaction rather than
   * `queueMicrotask`, which costs Node an async resource per call.
   */
  readonly #notify = (notification: StoreNotification): void => {
    const listeners = this.#listeners;
    if (listeners.size === 0) return;
    this.#outbox.push(notification, listeners.size === 1 ? (listeners.values().next().value as Listener) : [...listeners]);
    void DELIVERED.then(this.#deliverNext);
  };

  readonly #deliverNext = (): void => {
    const outbox = this.#outbox;
    const notification = outbox[this.#outboxHead] as StoreNotification;
    const to = outbox[this.#outboxHead + 1] as Listener | readonly Listener[];
    this.#outboxHead += 2;
    if (this.#outboxHead === outbox.length) {
      this.#outbox = [];
      this.#outboxHead = 0;
    }
    if (typeof to === 'function') deliver(to, notification);
    else for (const listener of to) deliver(listener, notification);
  };

  // JobStore

  async upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]> {
    return inputs.map((input) => this.#upsertJob(input));
  }

  async getJob(name: string): Promise<JobRecord | undefined> {
    return this.#jobs.get(name);
  }

  async listJobs(query: ListJobsQuery = {}): Promise<readonly JobRecord[]> {
    this.#names ??= [...this.#jobs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const names = this.#names;
    // The first name after `after`, by binary search.
    let lo = 0;
    let hi = names.length;
    while (query.after !== undefined && lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((names[mid] as string) <= query.after) lo = mid + 1;
      else hi = mid;
    }
    const limit = query.limit ?? Infinity;
    const page: JobRecord[] = [];
    for (let i = lo; i < names.length && page.length < limit; i += 1) page.push(this.#jobs.get(names[i] as string) as JobRecord);
    return page;
  }

  async removeJob(name: string): Promise<boolean> {
    if (!this.#jobs.delete(name)) return false;
    this.#names = undefined;
    this.#runs.deleteOfJob(name);
    this.#notify({ type: 'job-changed', jobName: name });
    return true;
  }

  async setSuspended(input: SetSuspendedInput): Promise<SetSuspendedResult | undefined> {
    const { name, suspended, now } = input;
    const job = this.#jobs.get(name);
    if (job === undefined) return undefined;
    const draft = jobRecord(job, job);
    draft.suspended = suspended;
    const next = this.#putJob(draft);
    const cancelled = suspended ? this.#cancelAhead(next, now) : [];
    this.#notify({ type: 'job-changed', jobName: name });
    return { job: next, cancelled };
  }

  async scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult> {
    const job = this.#jobs.get(input.jobName);
    if (job === undefined || job.suspended || job.cursor !== input.expectedCursor) return conflict(job);
    if (input.run === undefined) return { outcome: 'advanced', job: this.#advance(job, input) };
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: this.#advance(job, input), run: existing };
    if (job.maxRuns !== undefined && job.scheduledRuns >= job.maxRuns) return { outcome: 'conflict', job };

    // Allow creates the run whatever else is active: only the other policies read the active runs.
    const active = job.concurrencyPolicy === 'Allow' ? NONE : this.#runs.activeOf(job.name);
    if (active.length > 0 && job.concurrencyPolicy === 'Forbid') {
      return { outcome: 'skipped', job: this.#advance(job, input, { skipped: job.skipped + 1 }), active: active.map((run) => run.id) };
    }
    if (active.length > 0 && (job.concurrencyPolicy === 'CatchUp' || job.concurrencyPolicy === 'BufferOne')) {
      return { outcome: 'blocked', job, active: active.map((run) => run.id) };
    }
    const cancelled =
      job.concurrencyPolicy === 'Replace' && active.length > 0
        ? active.map((run) => this.#runs.endRun(run, { status: 'cancelled' }, input.now))
        : [];
    const run = this.#runs.insert(input.run, input.now, job);
    const advanced = this.#advance(job, input, { scheduledRuns: job.scheduledRuns + 1 });
    if (cancelled.length > 0) this.#runs.prune(advanced);
    return { outcome: 'created', job: advanced, run, cancelled };
  }

  async createRun(input: CreateRunInput): Promise<CreateRunResult> {
    const job = this.#jobs.get(input.run.jobName);
    if (job === undefined) return { outcome: 'missing-job' };
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', run: existing };
    return { outcome: 'created', run: this.#runs.insert(input.run, input.now, job) };
  }

  async addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(input.jobName);
    if (job === undefined) return undefined;
    const draft = jobRecord(job, job);
    draft.backfills = [...job.backfills, input.range];
    const next = this.#putJob(draft);
    this.#notify({ type: 'job-changed', jobName: job.name });
    return next;
  }

  async scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult> {
    const job = this.#jobs.get(input.jobName);
    const [first, ...rest] = job?.backfills ?? [];
    if (job === undefined || job.suspended || first?.id !== input.backfillId || first.next !== input.expectedNext) return conflict(job);
    if (this.#runs.activeOf(job.name).some((run) => run.trigger === 'backfill')) return { outcome: 'blocked', job };
    const backfills = input.next === undefined ? rest : [{ ...first, next: input.next }, ...rest];
    const draft = jobRecord(job, job);
    draft.backfills = backfills;
    const advanced = this.#putJob(draft);
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: advanced, run: existing };
    return { outcome: 'created', job: advanced, run: this.#runs.insert(input.run, input.now, advanced) };
  }

  #upsertJob(input: UpsertJobInput): UpsertJobResult {
    const existing = this.#jobs.get(input.spec.name);
    // The spec is replaced as a whole (a field dropped from the definition is dropped here too);
    // the job's state (flag, cursor, counters, times, backfills) is kept, or starts afresh.
    const job = jobRecord(
      input.spec,
      existing ?? { suspended: false, createdAt: input.now, cursor: input.initialCursor, succeeded: 0, failed: 0, skipped: 0, scheduledRuns: 0, backfills: NONE },
    );
    if (input.suspended !== undefined) job.suspended = input.suspended;
    this.#putJob(job);
    const cancelled = existing !== undefined && input.suspended === true ? this.#cancelAhead(job, input.now) : [];
    this.#notify({ type: 'job-changed', jobName: job.name });
    return cancelled.length === 0 ? { job, created: existing === undefined } : { job, created: false, cancelled };
  }

  #putJob(job: JobRecord): JobRecord {
    if (!this.#jobs.has(job.name)) this.#names = undefined;
    this.#jobs.set(job.name, job);
    return job;
  }

  /**
   * Suspending `job` (as just stored): cancels its runs created ahead of a tick still to
   * come, and prunes its history. A cancellation leaves the job's record as it is.
   */
  #cancelAhead(job: JobRecord, now: number): RunRecord[] {
    const ahead = this.#runs.activeOf(job.name).filter((run) => isCreatedAhead(run, now));
    const cancelled = ahead.map((run) => this.#runs.endRun(run, { status: 'cancelled' }, now));
    if (cancelled.length > 0) this.#runs.prune(job);
    return cancelled;
  }

  /** Moves the job's cursor to `input.cursor` (and sets the counts given). */
  #advance(job: JobRecord, input: ScheduleRunInput, counts?: { skipped?: number; scheduledRuns?: number }): JobRecord {
    // Re-read: cancellations under Replace update the job's record first.
    const current = this.#jobs.get(job.name) ?? job;
    const next = jobRecord(current, current);
    if (counts?.skipped !== undefined) next.skipped = counts.skipped;
    if (counts?.scheduledRuns !== undefined) next.scheduledRuns = counts.scheduledRuns;
    next.cursor = input.cursor;
    next.lastScheduleTime = input.cursor;
    return this.#putJob(next);
  }

  // RunQueue: memory-run-queue.ts.

  async findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult> {
    return this.#runs.findReadyRuns(input);
  }

  async claimRun(input: ClaimRunInput): Promise<Claim | undefined> {
    return this.#runs.claimRun(input);
  }

  async renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult> {
    return this.#runs.renewLease(input);
  }

  async finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult> {
    return this.#runs.finishAttempt(input);
  }

  async recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]> {
    return this.#runs.recoverExpiredRuns(input);
  }

  async expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult> {
    return this.#runs.expirePendingRuns(input);
  }

  async deleteExpiredRuns(input: ExpireInput): Promise<number> {
    return this.#runs.deleteExpiredRuns(input);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.#runs.get(id);
  }

  async listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]> {
    return this.#runs.listRuns(query);
  }

  async listRunsOfJobs(query: ListRunsOfJobsQuery): Promise<readonly RunRecord[]> {
    return this.#runs.listRunsOfJobs(query);
  }

  async listIndices(runId: string): Promise<readonly IndexRecord[]> {
    return this.#runs.listIndices(runId);
  }
}

/** A scheduling step refused: the job as it is, when there is one. */
function conflict(job: JobRecord | undefined): { outcome: 'conflict'; job?: JobRecord } {
  return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
}

function deliver(listener: Listener, notification: StoreNotification): void {
  try {
    listener(notification);
  } catch {
    // A watcher's failure is the watcher's business; the store's state is already consistent.
  }
}

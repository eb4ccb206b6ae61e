/**
 * The in-process store: jobs, cursors, runs and leases in plain maps. Every method
 * runs synchronously to completion before its promise resolves, which is what
 * makes each one atomic; several schedulers sharing one instance behave like
 * several processes sharing a Redis or Postgres store. Records are replaced, never
 * mutated, so a record handed out is a stable snapshot.
 */
import {
  type AddBackfillInput,
  type ClaimRunInput,
  type CreateRunInput,
  type CreateRunResult,
  type FindReadyRunsInput,
  type FindReadyRunsResult,
  type FinishAttemptInput,
  type FinishAttemptResult,
  type JobRecord,
  type ListRunsQuery,
  type Lock,
  type NewRun,
  type RecoverExpiredRunsInput,
  type RenewLeaseInput,
  type RenewLeaseResult,
  type RunRecord,
  type ScheduleBackfillRunInput,
  type ScheduleBackfillRunResult,
  type ScheduleRunInput,
  type ScheduleRunResult,
  type Store,
  type StoreNotification,
  type UpsertJobInput,
} from '../../src/store.js';
import { compareLeaseOrder, compareNewestFirst, compareOldestFirst, compareReadyOrder, isActive, pruneHistory } from '../../src/store-rules.js';
import { MemoryLock } from './memory-lock.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class MemoryStore implements Store {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #runs = new Map<string, RunRecord>();
  readonly #runsByJob = new Map<string, Set<string>>();
  readonly #pending = new Set<string>();
  readonly #running = new Set<string>();
  readonly #listeners = new Set<(notification: StoreNotification) => void>();
  readonly #lock = new MemoryLock();

  async init(): Promise<void> {}

  async close(): Promise<void> {}

  lock(): Lock {
    return this.#lock;
  }

  async upsertJob(input: UpsertJobInput): Promise<{ job: JobRecord; created: boolean }> {
    const existing = this.#jobs.get(input.spec.name);
    const job: JobRecord =
      existing === undefined
        ? {
            ...input.spec,
            suspended: input.suspended ?? false,
            createdAt: input.now,
            cursor: input.initialCursor,
            succeeded: 0,
            failed: 0,
            skipped: 0,
            backfills: [],
          }
        : {
            // The spec is replaced as a whole (a field dropped from the definition is dropped here too).
            ...input.spec,
            suspended: input.suspended ?? existing.suspended,
            createdAt: existing.createdAt,
            cursor: existing.cursor,
            ...(existing.lastScheduleTime === undefined ? {} : { lastScheduleTime: existing.lastScheduleTime }),
            ...(existing.lastSuccessfulTime === undefined ? {} : { lastSuccessfulTime: existing.lastSuccessfulTime }),
            succeeded: existing.succeeded,
            failed: existing.failed,
            skipped: existing.skipped,
            backfills: existing.backfills,
          };
    this.#jobs.set(job.name, job);
    this.#notify({ type: 'job-changed', jobName: job.name });
    return { job, created: existing === undefined };
  }

  async getJob(name: string): Promise<JobRecord | undefined> {
    return this.#jobs.get(name);
  }

  async listJobs(): Promise<readonly JobRecord[]> {
    return [...this.#jobs.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async removeJob(name: string): Promise<boolean> {
    if (!this.#jobs.delete(name)) return false;
    for (const id of this.#runsByJob.get(name) ?? []) this.#deleteRun(id);
    this.#runsByJob.delete(name);
    this.#notify({ type: 'job-changed', jobName: name });
    return true;
  }

  async setSuspended(name: string, suspended: boolean): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(name);
    if (job === undefined) return undefined;
    const next = { ...job, suspended };
    this.#jobs.set(name, next);
    this.#notify({ type: 'job-changed', jobName: name });
    return next;
  }

  async scheduleRun(input: ScheduleRunInput): Promise<ScheduleRunResult> {
    const job = this.#jobs.get(input.jobName);
    if (job === undefined || job.suspended || job.cursor !== input.expectedCursor) {
      return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
    const advance = (patch: Partial<Mutable<JobRecord>> = {}): JobRecord => {
      const next = { ...job, ...patch, cursor: input.cursor, lastScheduleTime: input.cursor };
      this.#jobs.set(job.name, next);
      return next;
    };
    if (input.run === undefined) return { outcome: 'advanced', job: advance() };
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: advance(), run: existing };

    const active = this.#activeRuns(job.name);
    if (active.length > 0 && job.concurrencyPolicy === 'Forbid') {
      return { outcome: 'skipped', job: advance({ skipped: job.skipped + 1 }), active: active.map((run) => run.id) };
    }
    if (active.length > 0 && job.concurrencyPolicy === 'CatchUp') {
      return { outcome: 'blocked', job, active: active.map((run) => run.id) };
    }
    const cancelled =
      job.concurrencyPolicy === 'Replace' ? active.map((run) => this.#finish(run, { status: 'cancelled' }, input.now)) : [];
    const run = this.#insertRun(input.run, input.now);
    const advanced = advance();
    if (cancelled.length > 0) this.#prune(advanced);
    return { outcome: 'created', job: advanced, run, cancelled };
  }

  async createRun(input: CreateRunInput): Promise<CreateRunResult> {
    if (!this.#jobs.has(input.run.jobName)) return { outcome: 'missing-job' };
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', run: existing };
    return { outcome: 'created', run: this.#insertRun(input.run, input.now) };
  }

  async addBackfill(input: AddBackfillInput): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(input.jobName);
    if (job === undefined) return undefined;
    const next = { ...job, backfills: [...job.backfills, input.range] };
    this.#jobs.set(job.name, next);
    this.#notify({ type: 'job-changed', jobName: job.name });
    return next;
  }

  async scheduleBackfillRun(input: ScheduleBackfillRunInput): Promise<ScheduleBackfillRunResult> {
    const job = this.#jobs.get(input.jobName);
    const [first, ...rest] = job?.backfills ?? [];
    if (job === undefined || job.suspended || first?.id !== input.backfillId || first.next !== input.expectedNext) {
      return job === undefined ? { outcome: 'conflict' } : { outcome: 'conflict', job };
    }
    if (this.#activeRuns(job.name).some((run) => run.trigger === 'backfill')) return { outcome: 'blocked', job };
    const backfills = input.next === undefined ? rest : [{ ...first, next: input.next }, ...rest];
    const advanced = { ...job, backfills };
    this.#jobs.set(job.name, advanced);
    const existing = this.#runs.get(input.run.id);
    if (existing !== undefined) return { outcome: 'exists', job: advanced, run: existing };
    return { outcome: 'created', job: advanced, run: this.#insertRun(input.run, input.now) };
  }

  async findReadyRuns(input: FindReadyRunsInput): Promise<FindReadyRunsResult> {
    const ready: RunRecord[] = [];
    let nextReadyAt: number | undefined;
    for (const id of this.#pending) {
      const run = this.#runs.get(id);
      if (run === undefined || !input.jobNames.has(run.jobName)) continue;
      if (run.readyAt <= input.now) ready.push(run);
      else if (nextReadyAt === undefined || run.readyAt < nextReadyAt) nextReadyAt = run.readyAt;
    }
    const runs = ready.sort(compareReadyOrder).slice(0, input.limit);
    return nextReadyAt === undefined ? { runs } : { runs, nextReadyAt };
  }

  async claimRun(input: ClaimRunInput): Promise<RunRecord | undefined> {
    const run = this.#runs.get(input.runId);
    if (run === undefined || run.status !== 'pending' || run.readyAt > input.now) return undefined;
    const claimed: RunRecord = {
      ...run,
      status: 'running',
      owner: input.owner,
      leaseUntil: input.leaseUntil,
      fence: run.fence + 1,
      startedAt: run.startedAt ?? input.now,
      ...(run.deadlineAt === undefined && input.deadlineAt !== undefined ? { deadlineAt: input.deadlineAt } : {}),
    };
    this.#putRun(claimed);
    return claimed;
  }

  async renewLease(input: RenewLeaseInput): Promise<RenewLeaseResult> {
    const run = this.#owned(input);
    if (run === undefined) {
      const current = this.#runs.get(input.runId);
      return current === undefined ? { ok: false } : { ok: false, status: current.status };
    }
    this.#putRun({ ...run, leaseUntil: input.leaseUntil });
    return { ok: true };
  }

  async finishAttempt(input: FinishAttemptInput): Promise<FinishAttemptResult> {
    const run = this.#owned(input);
    if (run === undefined) {
      const current = this.#runs.get(input.runId);
      return current === undefined ? { ok: false } : { ok: false, run: current };
    }
    return { ok: true, run: this.#finish(run, input.outcome, input.now) };
  }

  async recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<readonly RunRecord[]> {
    const expired: RunRecord[] = [];
    for (const id of this.#running) {
      const run = this.#runs.get(id);
      if (run !== undefined && (run.leaseUntil ?? 0) < input.now) expired.push(run);
    }
    expired.sort(compareLeaseOrder);
    const recovered: RunRecord[] = [];
    for (const run of expired.slice(0, input.limit)) {
      const back: RunRecord = {
        ...withoutLease(run),
        status: 'pending',
        attempt: run.attempt + 1,
        readyAt: input.now,
        error: { name: 'LeaseExpiredError', message: `lease of ${run.owner ?? 'unknown owner'} expired` },
      };
      this.#putRun(back);
      this.#notify({ type: 'run-ready', jobName: back.jobName, runId: back.id, readyAt: back.readyAt });
      recovered.push(back);
    }
    return recovered;
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.#runs.get(id);
  }

  async listRuns(query: ListRunsQuery): Promise<readonly RunRecord[]> {
    const runs: RunRecord[] = [];
    for (const id of this.#runsByJob.get(query.jobName) ?? []) {
      const run = this.#runs.get(id);
      if (run !== undefined && (query.statuses === undefined || query.statuses.includes(run.status))) runs.push(run);
    }
    runs.sort(compareNewestFirst);
    return query.limit === undefined ? runs : runs.slice(0, query.limit);
  }

  watch(listener: (notification: StoreNotification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #owned(input: { runId: string; owner: string; fence: number }): RunRecord | undefined {
    const run = this.#runs.get(input.runId);
    return run !== undefined && run.status === 'running' && run.owner === input.owner && run.fence === input.fence
      ? run
      : undefined;
  }

  #activeRuns(jobName: string): RunRecord[] {
    const active: RunRecord[] = [];
    for (const id of this.#runsByJob.get(jobName) ?? []) {
      const run = this.#runs.get(id);
      if (run !== undefined && isActive(run.status)) active.push(run);
    }
    return active.sort(compareOldestFirst);
  }

  #insertRun(input: NewRun, now: number): RunRecord {
    const run: RunRecord = { ...input, status: 'pending', attempt: 1, createdAt: now, readyAt: now, fence: 0 };
    this.#putRun(run);
    let ids = this.#runsByJob.get(run.jobName);
    if (ids === undefined) this.#runsByJob.set(run.jobName, (ids = new Set()));
    ids.add(run.id);
    this.#notify({ type: 'run-ready', jobName: run.jobName, runId: run.id, readyAt: run.readyAt });
    return run;
  }

  /** Applies an attempt's outcome (or a cancellation) and the job-side bookkeeping it implies. */
  #finish(run: RunRecord, outcome: FinishAttemptInput['outcome'] | { status: 'cancelled' }, now: number): RunRecord {
    const base = withoutLease(run);
    switch (outcome.status) {
      case 'retry': {
        const next: RunRecord = { ...base, status: 'pending', attempt: run.attempt + 1, readyAt: outcome.readyAt, error: outcome.error };
        this.#putRun(next);
        this.#notify({ type: 'run-ready', jobName: next.jobName, runId: next.id, readyAt: next.readyAt });
        return next;
      }
      case 'released': {
        const next: RunRecord = { ...base, status: 'pending', readyAt: now };
        this.#putRun(next);
        this.#notify({ type: 'run-ready', jobName: next.jobName, runId: next.id, readyAt: next.readyAt });
        return next;
      }
      default: {
        // A success clears the error of an earlier attempt; a cancellation keeps it for the record.
        const { error: _previous, ...clean } = base;
        const next: RunRecord =
          outcome.status === 'failed'
            ? { ...clean, status: 'failed', finishedAt: now, error: outcome.error }
            : outcome.status === 'succeeded'
              ? { ...clean, status: 'succeeded', finishedAt: now }
              : { ...base, status: 'cancelled', finishedAt: now };
        this.#putRun(next);
        const job = this.#jobs.get(run.jobName);
        if (job !== undefined) {
          const updated =
            outcome.status === 'succeeded'
              ? { ...job, succeeded: job.succeeded + 1, lastSuccessfulTime: now }
              : outcome.status === 'failed'
                ? { ...job, failed: job.failed + 1 }
                : job;
          this.#jobs.set(job.name, updated);
          // Cancellations happen inside scheduleRun, which prunes once for all of them.
          if (outcome.status !== 'cancelled') this.#prune(updated);
        }
        this.#notify({ type: 'run-finished', jobName: next.jobName, runId: next.id, status: next.status });
        return next;
      }
    }
  }

  #prune(job: JobRecord): void {
    const finished: RunRecord[] = [];
    for (const id of this.#runsByJob.get(job.name) ?? []) {
      const run = this.#runs.get(id);
      if (run !== undefined && !isActive(run.status)) finished.push(run);
    }
    for (const run of pruneHistory(finished, job.history)) this.#deleteRun(run.id);
  }

  #putRun(run: RunRecord): void {
    this.#runs.set(run.id, run);
    if (run.status === 'pending') this.#pending.add(run.id);
    else this.#pending.delete(run.id);
    if (run.status === 'running') this.#running.add(run.id);
    else this.#running.delete(run.id);
  }

  #deleteRun(id: string): void {
    const run = this.#runs.get(id);
    this.#runs.delete(id);
    this.#pending.delete(id);
    this.#running.delete(id);
    if (run !== undefined) this.#runsByJob.get(run.jobName)?.delete(id);
  }

  #notify(notification: StoreNotification): void {
    // Delivered after the operation completes, as a real store's notifications are.
    for (const listener of this.#listeners) {
      queueMicrotask(() => {
        try {
          listener(notification);
        } catch {
          // A watcher's failure is the watcher's business; the store's state is already consistent.
        }
      });
    }
  }
}

function withoutLease(run: RunRecord): RunRecord {
  const { owner: _owner, leaseUntil: _leaseUntil, ...rest } = run;
  return rest;
}

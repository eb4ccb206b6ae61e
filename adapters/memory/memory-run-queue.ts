/**
 * The memory store's run queue: the contract's `RunQueue` (src/store.ts), methods in
 * its order (claims, fenced renewals and endings, the planner's housekeeping, reads),
 * and the ending of a run for good, which the job side (memory-store.ts) uses too for
 * cancellations. `MemoryStore` hands its `RunQueue` methods to this class. Each method
 * runs synchronously to completion, which is what makes it atomic, and returns its
 * result as it is: the store's `async` method wraps it in the promise the contract
 * resolves. It extends `MemoryRuns` (memory-runs.ts: where the runs are kept, and
 * every write of a run); claims, endings and retries copy records field by field
 * (memory-records.ts says why, with figures).
 */
import {
  LEASE_EXPIRED_ERROR,
  PENDING_TIMEOUT_ERROR,
  type AttemptOutcome,
  type Claim,
  type ClaimRunInput,
  type ExpireInput,
  type ExpirePendingRunsResult,
  type FindReadyRunsInput,
  type FindReadyRunsResult,
  type FinishAttemptInput,
  type FinishAttemptResult,
  type IndexRecord,
  type JobRecord,
  type LeaseInput,
  type ListRunsOfJobsQuery,
  type ListRunsQuery,
  type RecoverExpiredRunsInput,
  type RenewLeaseInput,
  type RenewLeaseResult,
  type RunError,
  type RunRecord,
  type RunStatus,
  type StoreNotification,
} from '../../src/store.js';
import {
  compareExpiredLeases,
  compareExpiresAt,
  compareNewestFirst,
  comparePendingUntil,
  compareReadyOrder,
  expiresAtFor,
  isFinished,
  nextWaitingIndex,
  pruneHistory,
  withinRetryLimit,
  type ExpiredLease,
} from '../../src/store-rules.js';
import { jobRecord, type Draft } from '../../src/adapter-kit.js';
import { copyIndex, copyRun, fanOutState, KEEP, OMIT_ERROR, OMIT_LEASE } from './memory-records.js';
import { MemoryRuns } from './memory-runs.js';

/** How a run ends for good. */
export type RunEnding = { status: 'succeeded' } | { status: 'failed'; error: RunError } | { status: 'cancelled' };

export class MemoryRunQueue extends MemoryRuns {
  /** The store's jobs: read for their specs, written for their counters when a run ends. */
  readonly #jobs: Map<string, JobRecord>;
  readonly #notify: (notification: StoreNotification) => void;

  constructor(jobs: Map<string, JobRecord>, notify: (notification: StoreNotification) => void) {
    super(jobs, notify);
    this.#jobs = jobs;
    this.#notify = notify;
  }

  findReadyRuns(input: FindReadyRunsInput): FindReadyRunsResult {
    const ready: RunRecord[] = [];
    let nextReadyAt: number | undefined;
    for (const run of this.claimable()) {
      if (!input.jobNames.has(run.jobName)) continue;
      if (run.readyAt <= input.now) ready.push(run);
      else if (nextReadyAt === undefined || run.readyAt < nextReadyAt) nextReadyAt = run.readyAt;
    }
    const runs = ready.sort(compareReadyOrder).slice(0, input.limit);
    return nextReadyAt === undefined ? { runs } : { runs, nextReadyAt };
  }

  claimRun(input: ClaimRunInput): Claim | undefined {
    const run = this.get(input.runId);
    if (run === undefined || !this.isClaimable(run.id) || run.readyAt > input.now) return undefined;
    if (run.fanOut === undefined) {
      const claimed = started(run, input);
      claimed.status = 'running';
      claimed.owner = input.owner;
      claimed.leaseUntil = input.leaseUntil;
      claimed.fence = run.fence + 1;
      return { run: this.write(claimed, input.now) };
    }
    const waiting = nextWaitingIndex(run, this.indicesOf(run.id));
    if (waiting === undefined || waiting.readyAt > input.now) return undefined;
    // A re-claim adopts the index's record; a first claim creates it.
    const previous = this.index(run.id, waiting.index);
    const index: Draft<IndexRecord> =
      previous === undefined
        ? { runId: run.id, index: waiting.index, status: 'pending', attempt: 1, readyAt: waiting.readyAt, fence: 0 }
        : copyIndex(previous, KEEP);
    index.status = 'running';
    index.owner = input.owner;
    index.leaseUntil = input.leaseUntil;
    index.fence = (previous?.fence ?? 0) + 1;
    index.startedAt = previous?.startedAt ?? input.now;
    this.putIndex(index);
    const claimed = started(run, input);
    claimed.fanOut = fanOutState(run.fanOut, run.fanOut.retryLimit, run.fanOut.active + 1, run.fanOut.succeeded, run.fanOut.failed);
    return { run: this.#writeFanOut(claimed, input.now), index };
  }

  renewLease(input: RenewLeaseInput): RenewLeaseResult {
    if (input.index === undefined) {
      const run = this.#ownedRun(input);
      if (run === undefined) return refused(this.get(input.runId));
      this.write({ ...run, leaseUntil: input.leaseUntil }, input.now);
      return { ok: true };
    }
    const owned = this.#ownedIndex(input);
    if (owned === undefined) return refused(this.index(input.runId, input.index));
    // The run itself is not written: renewing an index changes nothing the run records.
    this.putIndex({ ...owned.index, leaseUntil: input.leaseUntil });
    return { ok: true };
  }

  finishAttempt(input: FinishAttemptInput): FinishAttemptResult {
    if (input.index === undefined) {
      const run = this.#ownedRun(input);
      if (run === undefined) return this.#fencedOut(input.runId);
      return { ok: true, run: this.#finishRun(run, input.outcome, input.now) };
    }
    const owned = this.#ownedIndex(input);
    if (owned === undefined) return this.#fencedOut(input.runId);
    const finished = this.#finishIndex(owned.run, owned.index, input.outcome, input.now);
    return { ok: true, run: finished.run, index: finished.index };
  }

  recoverExpiredRuns(input: RecoverExpiredRunsInput): readonly RunRecord[] {
    const expired: ExpiredLease[] = [];
    for (const run of this.running()) {
      if (run.fanOut === undefined) {
        if ((run.leaseUntil ?? 0) < input.now) expired.push({ runId: run.id, leaseUntil: run.leaseUntil ?? 0 });
        continue;
      }
      for (const index of this.indicesOf(run.id)) {
        if (index.status === 'running' && (index.leaseUntil ?? 0) < input.now) {
          expired.push({ runId: run.id, index: index.index, leaseUntil: index.leaseUntil ?? 0 });
        }
      }
    }
    expired.sort(compareExpiredLeases);
    const recovered: RunRecord[] = [];
    // A lost lease is a failed attempt, retried at once within the retry limit.
    const outcome = { status: 'retry', error: LEASE_EXPIRED_ERROR, readyAt: input.now } as const;
    for (const lease of expired) {
      if (recovered.length >= input.limit) break;
      const run = this.get(lease.runId);
      if (run === undefined) continue;
      if (lease.index === undefined) {
        recovered.push(this.#finishRun(run, outcome, input.now));
        continue;
      }
      // An earlier recovery in this call may have failed the run, cancelling this index.
      const index = this.index(lease.runId, lease.index);
      if (index?.status !== 'running') continue;
      recovered.push(this.#finishIndex(run, index, outcome, input.now).run);
    }
    return recovered;
  }

  expirePendingRuns(input: ExpireInput): ExpirePendingRunsResult {
    // Only claimable runs carry a pendingUntil (the pendingUntil rule).
    const due = this.claimable()
      .filter((run) => (run.pendingUntil ?? Infinity) <= input.now)
      .sort(comparePendingUntil)
      .slice(0, input.limit);
    const runs = due.map((run) => this.endRun(run, { status: 'failed', error: PENDING_TIMEOUT_ERROR }, input.now));
    let nextAt: number | undefined;
    for (const run of this.claimable()) {
      if (run.pendingUntil !== undefined && (nextAt === undefined || run.pendingUntil < nextAt)) nextAt = run.pendingUntil;
    }
    return nextAt === undefined ? { runs } : { runs, nextAt };
  }

  deleteExpiredRuns(input: ExpireInput): number {
    const due = this.all()
      .filter((run) => isFinished(run.status) && (run.expiresAt ?? Infinity) <= input.now)
      .sort(compareExpiresAt)
      .slice(0, input.limit);
    for (const run of due) this.delete(run.id);
    return due.length;
  }

  listRuns(query: ListRunsQuery): readonly RunRecord[] {
    const runs = this.#runsOf(query.jobName, query.statuses);
    return query.limit === undefined ? runs : runs.slice(0, query.limit);
  }

  listRunsOfJobs(query: ListRunsOfJobsQuery): readonly RunRecord[] {
    return [...new Set(query.jobNames)].flatMap((name) => this.#runsOf(name, query.statuses));
  }

  listIndices(runId: string): readonly IndexRecord[] {
    return [...this.indicesOf(runId)];
  }

  // Ending a run for good, for the run queue and the job side (Replace, suspensions).

  /**
   * Finishes a run for good (succeeded, failed, or cancelled by Replace) with the
   * job-side bookkeeping it implies: the run's unfinished index records cancelled,
   * `expiresAt`, counters, pruning, `run-finished`. A cancellation does not prune:
   * Replace prunes once for all the runs it cancels.
   */
  endRun(run: RunRecord, ending: RunEnding, now: number): RunRecord {
    const job = this.#jobs.get(run.jobName);
    const expiresAt = job === undefined ? undefined : expiresAtFor(now, job.history);
    for (const index of this.indicesOf(run.id)) {
      if (isFinished(index.status)) continue;
      const cancelled = copyIndex(index, OMIT_LEASE);
      cancelled.status = 'cancelled';
      cancelled.finishedAt = now;
      this.putIndex(cancelled);
    }
    // A success clears the error of an earlier attempt; a cancellation keeps it for the record.
    const ended = copyRun(run, ending.status === 'cancelled' ? OMIT_LEASE : OMIT_LEASE | OMIT_ERROR);
    ended.status = ending.status;
    ended.finishedAt = now;
    if (ending.status === 'failed') ended.error = ending.error;
    if (ended.fanOut !== undefined) ended.fanOut = fanOutState(ended.fanOut, ended.fanOut.retryLimit, 0, ended.fanOut.succeeded, ended.fanOut.failed);
    if (expiresAt !== undefined) ended.expiresAt = expiresAt;
    const stored = this.write(ended, now);
    if (job !== undefined && ending.status !== 'cancelled') {
      const counted = jobRecord(job, job);
      if (ending.status === 'succeeded') {
        counted.succeeded = job.succeeded + 1;
        counted.lastSuccessfulTime = now;
      } else counted.failed = job.failed + 1;
      this.#jobs.set(counted.name, counted);
      this.prune(counted);
    }
    this.#notify({ type: 'run-finished', jobName: stored.jobName, runId: stored.id, status: stored.status });
    return stored;
  }

  /** Deletes the job's finished runs beyond its history limits. */
  prune(job: JobRecord): void {
    for (const run of pruneHistory(this.finishedOf(job.name), job.history)) this.delete(run.id);
  }

  /** Applies an attempt's outcome to a plain run: a retry beyond the job's retry limit fails it. */
  #finishRun(run: RunRecord, outcome: AttemptOutcome, now: number): RunRecord {
    switch (outcome.status) {
      case 'retry': {
        if (!withinRetryLimit(run.attempt, this.#jobs.get(run.jobName)?.retryLimit)) {
          return this.endRun(run, { status: 'failed', error: outcome.error }, now);
        }
        const back = copyRun(run, OMIT_LEASE);
        back.status = 'pending';
        back.attempt = run.attempt + 1;
        back.readyAt = outcome.readyAt;
        back.error = outcome.error;
        return this.write(back, now);
      }
      case 'released': {
        const back = copyRun(run, OMIT_LEASE);
        back.status = 'pending';
        back.readyAt = now;
        return this.write(back, now);
      }
      default:
        return this.endRun(run, outcome, now);
    }
  }

  /** Applies an attempt's outcome to an index of a fan-out run, and what it implies for the run. */
  #finishIndex(run: RunRecord, index: IndexRecord, outcome: AttemptOutcome, now: number): { run: RunRecord; index: IndexRecord } {
    const fanOut = run.fanOut;
    if (fanOut === undefined) throw new Error(`run ${run.id} has no fan-out`);
    const active = fanOut.active - 1;
    const counted = copyRun(run, KEEP);
    switch (outcome.status) {
      case 'succeeded': {
        const done = copyIndex(index, OMIT_LEASE | OMIT_ERROR);
        done.status = 'succeeded';
        done.finishedAt = now;
        this.putIndex(done);
        counted.fanOut = fanOutState(fanOut, fanOut.retryLimit, active, fanOut.succeeded + 1, fanOut.failed);
        const next =
          counted.fanOut.succeeded >= counted.fanOut.completions
            ? this.endRun(counted, { status: 'succeeded' }, now)
            : this.#writeFanOut(counted, now);
        return { run: next, index: done };
      }
      case 'released': {
        const back = copyIndex(index, OMIT_LEASE);
        back.status = 'pending';
        back.readyAt = now;
        this.putIndex(back);
        counted.fanOut = fanOutState(fanOut, fanOut.retryLimit, active, fanOut.succeeded, fanOut.failed);
        return { run: this.#writeFanOut(counted, now), index: back };
      }
      default: {
        counted.fanOut = fanOutState(fanOut, fanOut.retryLimit, active, fanOut.succeeded, fanOut.failed + 1);
        if (outcome.status === 'retry' && withinRetryLimit(counted.fanOut.failed, counted.fanOut.retryLimit)) {
          const back = copyIndex(index, OMIT_LEASE);
          back.status = 'pending';
          back.attempt = index.attempt + 1;
          back.readyAt = outcome.readyAt;
          back.error = outcome.error;
          this.putIndex(back);
          return { run: this.#writeFanOut(counted, now), index: back };
        }
        const failed = copyIndex(index, OMIT_LEASE);
        failed.status = 'failed';
        failed.finishedAt = now;
        failed.error = outcome.error;
        this.putIndex(failed);
        return { run: this.endRun(counted, { status: 'failed', error: outcome.error }, now), index: failed };
      }
    }
  }

  /** Writes an unfinished fan-out run after its index records: its status and `readyAt` follow from the indices. */
  #writeFanOut(draft: Draft<RunRecord>, now: number): RunRecord {
    const waiting = nextWaitingIndex(draft, this.indicesOf(draft.id));
    draft.status = (draft.fanOut?.active ?? 0) > 0 ? 'running' : 'pending';
    // With no index waiting, `readyAt` keeps its last value (the run is not claimable then).
    draft.readyAt = waiting?.readyAt ?? draft.readyAt;
    return this.write(draft, now);
  }

  /** A job's runs (those with one of `statuses`, when given), newest first. */
  #runsOf(jobName: string, statuses: readonly RunStatus[] | undefined): RunRecord[] {
    return this.ofJob(jobName)
      .filter((run) => statuses === undefined || statuses.includes(run.status))
      .sort(compareNewestFirst);
  }

  /** The plain run `input` leases, if it still does (a fan-out run is leased index by index). */
  #ownedRun(input: LeaseInput): RunRecord | undefined {
    const run = this.get(input.runId);
    return run !== undefined && run.fanOut === undefined && run.status === 'running' && run.owner === input.owner && run.fence === input.fence
      ? run
      : undefined;
  }

  /** The fan-out index `input` leases, if it still does, with its run. */
  #ownedIndex(input: LeaseInput): { run: RunRecord; index: IndexRecord } | undefined {
    const run = this.get(input.runId);
    const index = input.index === undefined ? undefined : this.index(input.runId, input.index);
    return run?.fanOut !== undefined && index !== undefined && index.status === 'running' && index.owner === input.owner && index.fence === input.fence
      ? { run, index }
      : undefined;
  }

  #fencedOut(runId: string): FinishAttemptResult {
    const current = this.get(runId);
    return current === undefined ? { ok: false } : { ok: false, run: current };
  }
}

/** The claimed run's draft: `startedAt` and `deadlineAt` set if not yet set. */
function started(run: RunRecord, input: ClaimRunInput): Draft<RunRecord> {
  const draft = copyRun(run, KEEP);
  draft.startedAt = run.startedAt ?? input.now;
  if (run.deadlineAt === undefined && input.deadlineAt !== undefined) draft.deadlineAt = input.deadlineAt;
  return draft;
}

/** A renewal refused: the run's or index's status, when it still exists. */
function refused(current: { readonly status: RunStatus } | undefined): RenewLeaseResult {
  return current === undefined ? { ok: false } : { ok: false, status: current.status };
}

/**
 * What happens to the memory store's runs after they are created: claims (of a
 * plain run, or of a fan-out run's next index), leases, finished attempts, the end
 * of a run with its job-side bookkeeping, recovery, pending timeouts and history
 * (pruning, TTL). Each function runs synchronously to completion, which is what
 * makes it atomic.
 */
import {
  LEASE_EXPIRED_ERROR,
  PENDING_TIMEOUT_ERROR,
  type AttemptOutcome,
  type Claim,
  type ClaimRunInput,
  type ExpireInput,
  type ExpirePendingRunsResult,
  type FinishAttemptInput,
  type FinishAttemptResult,
  type IndexRecord,
  type JobRecord,
  type LeaseInput,
  type RecoverExpiredRunsInput,
  type RenewLeaseInput,
  type RenewLeaseResult,
  type RunError,
  type RunRecord,
} from '../../src/store.js';
import {
  compareExpiredLeases,
  compareExpiresAt,
  comparePendingUntil,
  expiresAtFor,
  isFinished,
  nextWaitingIndex,
  pruneHistory,
  withinRetryLimit,
  type ExpiredLease,
} from '../../src/store-rules.js';
import type { Draft } from '../../src/adapter-kit.js';
import { copyIndex, copyJob, copyRun, fanOutCounts, KEEP, OMIT_ERROR, OMIT_LEASE } from './memory-records.js';
import type { MemoryTables } from './memory-tables.js';

/** How a run ends for good. */
export type RunEnding = { status: 'succeeded' } | { status: 'failed'; error: RunError } | { status: 'cancelled' };

export function claimRun(tables: MemoryTables, input: ClaimRunInput): Claim | undefined {
  const run = tables.run(input.runId);
  if (run === undefined || !tables.isClaimable(run.id) || run.readyAt > input.now) return undefined;
  if (run.fanOut === undefined) {
    const claimed = started(run, input);
    claimed.status = 'running';
    claimed.owner = input.owner;
    claimed.leaseUntil = input.leaseUntil;
    claimed.fence = run.fence + 1;
    return { run: tables.writeRun(claimed, input.now) };
  }
  const waiting = nextWaitingIndex(run, tables.indices(run.id));
  if (waiting === undefined || waiting.readyAt > input.now) return undefined;
  // A re-claim adopts the index's record; a first claim creates it.
  const previous = tables.index(run.id, waiting.index);
  const index: Draft<IndexRecord> =
    previous === undefined
      ? { runId: run.id, index: waiting.index, status: 'pending', attempt: 1, readyAt: waiting.readyAt, fence: 0 }
      : copyIndex(previous, KEEP);
  index.status = 'running';
  index.owner = input.owner;
  index.leaseUntil = input.leaseUntil;
  index.fence = (previous?.fence ?? 0) + 1;
  index.startedAt = previous?.startedAt ?? input.now;
  tables.putIndex(index);
  const claimed = started(run, input);
  claimed.fanOut = fanOutCounts(run.fanOut, run.fanOut.active + 1, run.fanOut.succeeded, run.fanOut.failed);
  return { run: writeFanOut(tables, claimed, input.now), index };
}

/** The claimed run's draft: `startedAt` and `deadlineAt` set if not yet set. */
function started(run: RunRecord, input: ClaimRunInput): Draft<RunRecord> {
  const draft = copyRun(run, KEEP);
  draft.startedAt = run.startedAt ?? input.now;
  if (run.deadlineAt === undefined && input.deadlineAt !== undefined) draft.deadlineAt = input.deadlineAt;
  return draft;
}

export function renewLease(tables: MemoryTables, input: RenewLeaseInput): RenewLeaseResult {
  if (input.index === undefined) {
    const run = ownedRun(tables, input);
    if (run === undefined) {
      const current = tables.run(input.runId);
      return current === undefined ? { ok: false } : { ok: false, status: current.status };
    }
    tables.writeRun({ ...run, leaseUntil: input.leaseUntil }, input.now);
    return { ok: true };
  }
  const owned = ownedIndex(tables, input);
  if (owned === undefined) {
    const current = tables.index(input.runId, input.index);
    return current === undefined ? { ok: false } : { ok: false, status: current.status };
  }
  // The run itself is not written: renewing an index changes nothing the run records.
  tables.putIndex({ ...owned.index, leaseUntil: input.leaseUntil });
  return { ok: true };
}

export function finishAttempt(tables: MemoryTables, input: FinishAttemptInput): FinishAttemptResult {
  if (input.index === undefined) {
    const run = ownedRun(tables, input);
    if (run === undefined) return fencedOut(tables, input.runId);
    return { ok: true, run: finishRun(tables, run, input.outcome, input.now) };
  }
  const owned = ownedIndex(tables, input);
  if (owned === undefined) return fencedOut(tables, input.runId);
  const finished = finishIndex(tables, owned.run, owned.index, input.outcome, input.now);
  return { ok: true, run: finished.run, index: finished.index };
}

export function recoverExpiredRuns(tables: MemoryTables, input: RecoverExpiredRunsInput): RunRecord[] {
  const expired: ExpiredLease[] = [];
  for (const run of tables.runningRuns()) {
    if (run.fanOut === undefined) {
      if ((run.leaseUntil ?? 0) < input.now) expired.push({ runId: run.id, leaseUntil: run.leaseUntil ?? 0 });
      continue;
    }
    for (const index of tables.indices(run.id)) {
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
    const run = tables.run(lease.runId);
    if (run === undefined) continue;
    if (lease.index === undefined) {
      recovered.push(finishRun(tables, run, outcome, input.now));
      continue;
    }
    // An earlier recovery in this call may have failed the run, cancelling this index.
    const index = tables.index(lease.runId, lease.index);
    if (index?.status !== 'running') continue;
    recovered.push(finishIndex(tables, run, index, outcome, input.now).run);
  }
  return recovered;
}

export function expirePendingRuns(tables: MemoryTables, input: ExpireInput): ExpirePendingRunsResult {
  // Only claimable runs carry a pendingUntil (the pendingUntil rule).
  const due = tables
    .claimableRuns()
    .filter((run) => (run.pendingUntil ?? Infinity) <= input.now)
    .sort(comparePendingUntil)
    .slice(0, input.limit);
  const runs = due.map((run) => endRun(tables, run, { status: 'failed', error: PENDING_TIMEOUT_ERROR }, input.now));
  let nextAt: number | undefined;
  for (const run of tables.claimableRuns()) {
    if (run.pendingUntil !== undefined && (nextAt === undefined || run.pendingUntil < nextAt)) nextAt = run.pendingUntil;
  }
  return nextAt === undefined ? { runs } : { runs, nextAt };
}

export function deleteExpiredRuns(tables: MemoryTables, input: ExpireInput): number {
  const due = tables
    .allRuns()
    .filter((run) => isFinished(run.status) && (run.expiresAt ?? Infinity) <= input.now)
    .sort(compareExpiresAt)
    .slice(0, input.limit);
  for (const run of due) tables.deleteRun(run.id);
  return due.length;
}

/**
 * Finishes a run for good (succeeded, failed, or cancelled by Replace) with the
 * job-side bookkeeping it implies: the run's unfinished index records cancelled,
 * `expiresAt`, counters, pruning, `run-finished`. A cancellation does not prune:
 * Replace prunes once for all the runs it cancels.
 */
export function endRun(tables: MemoryTables, run: RunRecord, ending: RunEnding, now: number): RunRecord {
  const job = tables.job(run.jobName);
  const expiresAt = job === undefined ? undefined : expiresAtFor(now, job.history);
  for (const index of tables.indices(run.id)) {
    if (isFinished(index.status)) continue;
    const cancelled = copyIndex(index, OMIT_LEASE);
    cancelled.status = 'cancelled';
    cancelled.finishedAt = now;
    tables.putIndex(cancelled);
  }
  // A success clears the error of an earlier attempt; a cancellation keeps it for the record.
  const ended = copyRun(run, ending.status === 'cancelled' ? OMIT_LEASE : OMIT_LEASE | OMIT_ERROR);
  ended.status = ending.status;
  ended.finishedAt = now;
  if (ending.status === 'failed') ended.error = ending.error;
  if (ended.fanOut !== undefined) ended.fanOut = fanOutCounts(ended.fanOut, 0, ended.fanOut.succeeded, ended.fanOut.failed);
  if (expiresAt !== undefined) ended.expiresAt = expiresAt;
  const stored = tables.writeRun(ended, now);
  if (job !== undefined && ending.status !== 'cancelled') {
    const counted = copyJob(job);
    if (ending.status === 'succeeded') {
      counted.succeeded = job.succeeded + 1;
      counted.lastSuccessfulTime = now;
    } else counted.failed = job.failed + 1;
    prune(tables, tables.putJob(counted));
  }
  tables.notify({ type: 'run-finished', jobName: stored.jobName, runId: stored.id, status: stored.status });
  return stored;
}

/** Deletes the job's finished runs beyond its history limits. */
export function prune(tables: MemoryTables, job: JobRecord): void {
  for (const run of pruneHistory(tables.finishedRunsOf(job.name), job.history)) tables.deleteRun(run.id);
}

/** Applies an attempt's outcome to a plain run: a retry beyond the job's retry limit fails it. */
function finishRun(tables: MemoryTables, run: RunRecord, outcome: AttemptOutcome, now: number): RunRecord {
  switch (outcome.status) {
    case 'retry': {
      if (!withinRetryLimit(run.attempt, tables.job(run.jobName)?.retryLimit)) {
        return endRun(tables, run, { status: 'failed', error: outcome.error }, now);
      }
      const back = copyRun(run, OMIT_LEASE);
      back.status = 'pending';
      back.attempt = run.attempt + 1;
      back.readyAt = outcome.readyAt;
      back.error = outcome.error;
      return tables.writeRun(back, now);
    }
    case 'released': {
      const back = copyRun(run, OMIT_LEASE);
      back.status = 'pending';
      back.readyAt = now;
      return tables.writeRun(back, now);
    }
    default:
      return endRun(tables, run, outcome, now);
  }
}

/** Applies an attempt's outcome to an index of a fan-out run, and what it implies for the run. */
function finishIndex(
  tables: MemoryTables,
  run: RunRecord,
  index: IndexRecord,
  outcome: AttemptOutcome,
  now: number,
): { run: RunRecord; index: IndexRecord } {
  const fanOut = run.fanOut;
  if (fanOut === undefined) throw new Error(`run ${run.id} has no fan-out`);
  const active = fanOut.active - 1;
  const counted = copyRun(run, KEEP);
  switch (outcome.status) {
    case 'succeeded': {
      const done = copyIndex(index, OMIT_LEASE | OMIT_ERROR);
      done.status = 'succeeded';
      done.finishedAt = now;
      tables.putIndex(done);
      counted.fanOut = fanOutCounts(fanOut, active, fanOut.succeeded + 1, fanOut.failed);
      const next =
        counted.fanOut.succeeded >= counted.fanOut.completions
          ? endRun(tables, counted, { status: 'succeeded' }, now)
          : writeFanOut(tables, counted, now);
      return { run: next, index: done };
    }
    case 'released': {
      const back = copyIndex(index, OMIT_LEASE);
      back.status = 'pending';
      back.readyAt = now;
      tables.putIndex(back);
      counted.fanOut = fanOutCounts(fanOut, active, fanOut.succeeded, fanOut.failed);
      return { run: writeFanOut(tables, counted, now), index: back };
    }
    default: {
      counted.fanOut = fanOutCounts(fanOut, active, fanOut.succeeded, fanOut.failed + 1);
      if (outcome.status === 'retry' && withinRetryLimit(counted.fanOut.failed, counted.fanOut.retryLimit)) {
        const back = copyIndex(index, OMIT_LEASE);
        back.status = 'pending';
        back.attempt = index.attempt + 1;
        back.readyAt = outcome.readyAt;
        back.error = outcome.error;
        tables.putIndex(back);
        return { run: writeFanOut(tables, counted, now), index: back };
      }
      const failed = copyIndex(index, OMIT_LEASE);
      failed.status = 'failed';
      failed.finishedAt = now;
      failed.error = outcome.error;
      tables.putIndex(failed);
      return { run: endRun(tables, counted, { status: 'failed', error: outcome.error }, now), index: failed };
    }
  }
}

/** Writes an unfinished fan-out run after its index records: its status and `readyAt` follow from the indices. */
function writeFanOut(tables: MemoryTables, draft: Draft<RunRecord>, now: number): RunRecord {
  const waiting = nextWaitingIndex(draft, tables.indices(draft.id));
  draft.status = (draft.fanOut?.active ?? 0) > 0 ? 'running' : 'pending';
  // With no index waiting, `readyAt` keeps its last value (the run is not claimable then).
  draft.readyAt = waiting?.readyAt ?? draft.readyAt;
  return tables.writeRun(draft, now);
}

/** The plain run `input` leases, if it still does (a fan-out run is leased index by index). */
function ownedRun(tables: MemoryTables, input: LeaseInput): RunRecord | undefined {
  const run = tables.run(input.runId);
  return run !== undefined &&
    run.fanOut === undefined &&
    run.status === 'running' &&
    run.owner === input.owner &&
    run.fence === input.fence
    ? run
    : undefined;
}

/** The fan-out index `input` leases, if it still does, with its run. */
function ownedIndex(tables: MemoryTables, input: LeaseInput): { run: RunRecord; index: IndexRecord } | undefined {
  const run = tables.run(input.runId);
  const index = input.index === undefined ? undefined : tables.index(input.runId, input.index);
  return run?.fanOut !== undefined &&
    index !== undefined &&
    index.status === 'running' &&
    index.owner === input.owner &&
    index.fence === input.fence
    ? { run, index }
    : undefined;
}

function fencedOut(tables: MemoryTables, runId: string): FinishAttemptResult {
  const current = tables.run(runId);
  return current === undefined ? { ok: false } : { ok: false, run: current };
}

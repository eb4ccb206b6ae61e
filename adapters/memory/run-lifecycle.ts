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
  type ExpiredLease,
} from '../../src/store-rules.js';
import { patch, type MemoryTables } from './memory-tables.js';

/** How a run ends for good. */
export type RunEnding = { status: 'succeeded' } | { status: 'failed'; error: RunError } | { status: 'cancelled' };

export function claimRun(tables: MemoryTables, input: ClaimRunInput): Claim | undefined {
  const run = tables.run(input.runId);
  if (run === undefined || !tables.isClaimable(run.id) || run.readyAt > input.now) return undefined;
  const started = patch(run, {
    startedAt: run.startedAt ?? input.now,
    ...(run.deadlineAt === undefined && input.deadlineAt !== undefined ? { deadlineAt: input.deadlineAt } : {}),
  });
  if (run.fanOut === undefined) {
    const claimed = tables.writeRun(
      patch(started, { status: 'running', owner: input.owner, leaseUntil: input.leaseUntil, fence: run.fence + 1 }),
      input.now,
    );
    return { run: claimed };
  }
  const waiting = nextWaitingIndex(run, tables.indices(run.id));
  if (waiting === undefined || waiting.readyAt > input.now) return undefined;
  // A re-claim adopts the index's record; a first claim creates it.
  const previous = tables.index(run.id, waiting.index);
  const index = tables.putIndex(
    patch(previous ?? { runId: run.id, index: waiting.index, status: 'pending', attempt: 1, readyAt: waiting.readyAt, fence: 0 }, {
      status: 'running',
      owner: input.owner,
      leaseUntil: input.leaseUntil,
      fence: (previous?.fence ?? 0) + 1,
      startedAt: previous?.startedAt ?? input.now,
    }),
  );
  const claimed = writeFanOut(tables, patch(started, { fanOut: { ...run.fanOut, active: run.fanOut.active + 1 } }), input.now);
  return { run: claimed, index };
}

export function renewLease(tables: MemoryTables, input: RenewLeaseInput): RenewLeaseResult {
  if (input.index === undefined) {
    const run = ownedRun(tables, input);
    if (run === undefined) {
      const current = tables.run(input.runId);
      return current === undefined ? { ok: false } : { ok: false, status: current.status };
    }
    tables.writeRun(patch(run, { leaseUntil: input.leaseUntil }), input.now);
    return { ok: true };
  }
  const owned = ownedIndex(tables, input);
  if (owned === undefined) {
    const current = tables.index(input.runId, input.index);
    return current === undefined ? { ok: false } : { ok: false, status: current.status };
  }
  // The run itself is not written: renewing an index changes nothing the run records.
  tables.putIndex(patch(owned.index, { leaseUntil: input.leaseUntil }));
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
  return { ok: true, ...finishIndex(tables, owned.run, owned.index, input.outcome, input.now) };
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
  for (const lease of expired) {
    if (recovered.length >= input.limit) break;
    const run = tables.run(lease.runId);
    if (run === undefined) continue;
    if (lease.index === undefined) {
      const back: RunRecord = {
        ...withoutLease(run),
        status: 'pending',
        attempt: run.attempt + 1,
        readyAt: input.now,
        error: LEASE_EXPIRED_ERROR,
      };
      recovered.push(tables.writeRun(back, input.now));
      continue;
    }
    // An earlier recovery in this call may have failed the run, cancelling this index.
    const index = tables.index(lease.runId, lease.index);
    if (index?.status !== 'running') continue;
    const outcome = { status: 'retry', error: LEASE_EXPIRED_ERROR, readyAt: input.now } as const;
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
  // A success clears the error of an earlier attempt; a cancellation keeps it for the record.
  const { error: previous, ...base } = withoutLease(run);
  const error = ending.status === 'failed' ? ending.error : ending.status === 'cancelled' ? previous : undefined;
  const expiresAt = job === undefined ? undefined : expiresAtFor(now, job.history);
  for (const index of tables.indices(run.id)) {
    if (!isFinished(index.status)) tables.putIndex(patch(withoutLease(index), { status: 'cancelled', finishedAt: now }));
  }
  const ended = tables.writeRun(
    patch(base, {
      status: ending.status,
      finishedAt: now,
      ...(error === undefined ? {} : { error }),
      ...(base.fanOut === undefined ? {} : { fanOut: { ...base.fanOut, active: 0 } }),
      ...(expiresAt === undefined ? {} : { expiresAt }),
    }),
    now,
  );
  if (job !== undefined) {
    const updated = tables.putJob(
      ending.status === 'succeeded'
        ? patch(job, { succeeded: job.succeeded + 1, lastSuccessfulTime: now })
        : ending.status === 'failed'
          ? patch(job, { failed: job.failed + 1 })
          : job,
    );
    if (ending.status !== 'cancelled') prune(tables, updated);
  }
  tables.notify({ type: 'run-finished', jobName: ended.jobName, runId: ended.id, status: ended.status });
  return ended;
}

/** Deletes the job's finished runs beyond its history limits. */
export function prune(tables: MemoryTables, job: JobRecord): void {
  for (const run of pruneHistory(tables.finishedRunsOf(job.name), job.history)) tables.deleteRun(run.id);
}

/** Applies an attempt's outcome to a plain run. */
function finishRun(tables: MemoryTables, run: RunRecord, outcome: AttemptOutcome, now: number): RunRecord {
  const base = withoutLease(run);
  switch (outcome.status) {
    case 'retry':
      return tables.writeRun(patch(base, { status: 'pending', attempt: run.attempt + 1, readyAt: outcome.readyAt, error: outcome.error }), now);
    case 'released':
      return tables.writeRun(patch(base, { status: 'pending', readyAt: now }), now);
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
  const base = withoutLease(index);
  const active = fanOut.active - 1;
  switch (outcome.status) {
    case 'succeeded': {
      const { error: _previous, ...clean } = base;
      const done = tables.putIndex(patch(clean, { status: 'succeeded', finishedAt: now }));
      const counts = { ...fanOut, active, succeeded: fanOut.succeeded + 1 };
      const next =
        counts.succeeded >= counts.completions
          ? endRun(tables, patch(run, { fanOut: counts }), { status: 'succeeded' }, now)
          : writeFanOut(tables, patch(run, { fanOut: counts }), now);
      return { run: next, index: done };
    }
    case 'released': {
      const back = tables.putIndex(patch(base, { status: 'pending', readyAt: now }));
      return { run: writeFanOut(tables, patch(run, { fanOut: { ...fanOut, active } }), now), index: back };
    }
    default: {
      const counts = { ...fanOut, active, failed: fanOut.failed + 1 };
      if (outcome.status === 'retry' && counts.failed <= counts.retryLimit) {
        const back = tables.putIndex(patch(base, { status: 'pending', attempt: index.attempt + 1, readyAt: outcome.readyAt, error: outcome.error }));
        return { run: writeFanOut(tables, patch(run, { fanOut: counts }), now), index: back };
      }
      const failed = tables.putIndex(patch(base, { status: 'failed', finishedAt: now, error: outcome.error }));
      return { run: endRun(tables, patch(run, { fanOut: counts }), { status: 'failed', error: outcome.error }, now), index: failed };
    }
  }
}

/** Writes an unfinished fan-out run after its index records: its status and `readyAt` follow from the indices. */
function writeFanOut(tables: MemoryTables, draft: RunRecord, now: number): RunRecord {
  const waiting = nextWaitingIndex(draft, tables.indices(draft.id));
  const running = (draft.fanOut?.active ?? 0) > 0;
  // With no index waiting, `readyAt` keeps its last value (the run is not claimable then).
  return tables.writeRun(patch(draft, { status: running ? 'running' : 'pending', readyAt: waiting?.readyAt ?? draft.readyAt }), now);
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

function withoutLease<T extends { readonly owner?: string; readonly leaseUntil?: number }>(record: T): Omit<T, 'owner' | 'leaseUntil'> {
  const { owner: _owner, leaseUntil: _leaseUntil, ...rest } = record;
  return rest;
}

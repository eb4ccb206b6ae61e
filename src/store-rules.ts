/**
 * The rules of the storage contract that every store applies the same way, exported
 * from `tickwork/store` for adapter authors: which runs are active, finished or
 * claimable, which index a fan-out claim takes, the order runs are handed out,
 * listed, recovered and expired in, the `pendingUntil` and `expiresAt` deadlines, and
 * which finished runs history pruning deletes.
 *
 * When to use them: a store that decides in JavaScript (the memory store, a store
 * over a key-value API) calls them inside its atomic step, so it agrees with the
 * others by construction: `pendingUntilFor` on every write that leaves a run
 * claimable, `expiresAtFor` and `pruneHistory` on every final write, the `compare*`
 * functions to sort what `findReadyRuns`, `listRuns`, `recoverExpiredRuns`,
 * `expirePendingRuns` and `deleteExpiredRuns` hand back, `isClaimable` and
 * `nextWaitingIndex` in `claimRun`. A store that decides in its server (Lua, SQL)
 * mirrors them there, as the Redis and Postgres stores do; the conformance suite
 * (`tickwork/testing`) checks that it agrees.
 */
import { ACTIVE_STATUSES, type HistoryLimits, type IndexRecord, type RunRecord, type RunStatus } from './store.js';

/** Pending or running: what the concurrency policies count (`ACTIVE_STATUSES`). */
export function isActive(status: RunStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

/** A run created ahead of a tick still to come, which suspending its job cancels (see `Store.setSuspended`). */
export function isCreatedAhead(run: RunRecord, now: number): boolean {
  return run.trigger === 'schedule' && run.status === 'pending' && run.scheduledAt > now;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Claim order: earliest `readyAt`, then earliest `scheduledAt`, then ID. */
export function compareReadyOrder(a: RunRecord, b: RunRecord): number {
  return a.readyAt - b.readyAt || a.scheduledAt - b.scheduledAt || compareIds(a.id, b.id);
}

/** Listing order: newest `createdAt` first, then latest `scheduledAt`, then ID descending. */
export function compareNewestFirst(a: RunRecord, b: RunRecord): number {
  return b.createdAt - a.createdAt || b.scheduledAt - a.scheduledAt || compareIds(b.id, a.id);
}

/** The order of `active` and `cancelled` lists: oldest `createdAt` first, then `scheduledAt`, then ID. */
export function compareOldestFirst(a: RunRecord, b: RunRecord): number {
  return compareNewestFirst(b, a);
}

/** One lease to recover: a plain run's (no `index`) or a fan-out index's. */
export interface ExpiredLease {
  readonly runId: string;
  readonly index?: number;
  readonly leaseUntil: number;
}

/** Recovery order across runs and indices: the lease that expired first, then run ID, then index (a plain run first). */
export function compareExpiredLeases(a: ExpiredLease, b: ExpiredLease): number {
  return a.leaseUntil - b.leaseUntil || compareIds(a.runId, b.runId) || (a.index ?? -1) - (b.index ?? -1);
}

/** `expirePendingRuns` order: earliest `pendingUntil`, then ID. */
export function comparePendingUntil(a: RunRecord, b: RunRecord): number {
  return (a.pendingUntil ?? 0) - (b.pendingUntil ?? 0) || compareIds(a.id, b.id);
}

/** `deleteExpiredRuns` order: earliest `expiresAt`, then ID. */
export function compareExpiresAt(a: RunRecord, b: RunRecord): number {
  return (a.expiresAt ?? 0) - (b.expiresAt ?? 0) || compareIds(a.id, b.id);
}

/** True once a run or index can change no more. */
export function isFinished(status: RunStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'cancelled';
}

/**
 * The index a claim of fan-out run `run` would take, and when it is ready: among the
 * waiting indices (no record yet, ready from the run's `createdAt`, or a `pending`
 * record, ready at its `readyAt`), the earliest ready, ties by lowest index.
 * `undefined` when no index waits. `indices` are the run's index records.
 */
export function nextWaitingIndex(
  run: RunRecord,
  indices: readonly IndexRecord[],
): { readonly index: number; readonly readyAt: number } | undefined {
  const completions = run.fanOut?.completions ?? 0;
  const byIndex = new Map(indices.map((record) => [record.index, record]));
  let best: { index: number; readyAt: number } | undefined;
  for (let index = 0; index < completions; index += 1) {
    const record = byIndex.get(index);
    const readyAt = record === undefined ? run.createdAt : record.status === 'pending' ? record.readyAt : undefined;
    if (readyAt !== undefined && (best === undefined || readyAt < best.readyAt)) best = { index, readyAt };
  }
  return best;
}

/**
 * Whether a claim could take the run once it is ready: a plain run while `pending`;
 * a fan-out run while not finished, with fewer than `parallelism` indices running
 * and an index waiting. (`readyAt` decides when, not whether.)
 */
export function isClaimable(run: RunRecord, indices: readonly IndexRecord[]): boolean {
  if (run.fanOut === undefined) return run.status === 'pending';
  return !isFinished(run.status) && run.fanOut.active < run.fanOut.parallelism && nextWaitingIndex(run, indices) !== undefined;
}

/**
 * The `pendingUntil` a write that leaves a run claimable sets (`undefined`: the job has
 * no pending timeout); a write that leaves it not claimable removes it. Every write of a
 * run but a lease renewal applies it (see `Store.claimRun`).
 */
export function pendingUntilFor(readyAt: number, now: number, pendingTimeoutMs: number | undefined): number | undefined {
  return pendingTimeoutMs === undefined ? undefined : Math.max(readyAt, now) + pendingTimeoutMs;
}

/**
 * Whether a failed attempt is retried: while the failed attempts counted so far, this
 * one included, are at most `retryLimit` (a plain run's attempt number, a fan-out
 * run's `fanOut.failed`). The one rule of the retry limit, for every store and every
 * kind of run; a job record without a `retryLimit` (written before it existed) is
 * not limited.
 */
export function withinRetryLimit(failedAttempts: number, retryLimit: number | undefined): boolean {
  return retryLimit === undefined || failedAttempts <= retryLimit;
}

/** The `expiresAt` a final write (succeeded, failed, cancelled) sets (`undefined`: the job keeps history without a TTL). */
export function expiresAtFor(finishedAt: number, history: HistoryLimits): number | undefined {
  return history.ttlMs === undefined ? undefined : finishedAt + history.ttlMs;
}

/**
 * The finished runs to delete so that at most `limits.succeeded` succeeded and
 * `limits.failed` failed-or-cancelled runs remain, keeping the most recently
 * finished ones (latest `finishedAt`, ties as `compareNewestFirst`). Call it with the
 * job's finished runs and `job.history` after every final write, in the same atomic step.
 */
export function pruneHistory(
  finished: readonly RunRecord[],
  limits: { readonly succeeded: number; readonly failed: number },
): RunRecord[] {
  // Every finish prunes: count first, and sort only when a limit is passed by more than one run.
  let succeeded = 0;
  for (const run of finished) if (run.status === 'succeeded') succeeded += 1;
  const failed = finished.length - succeeded;
  if (succeeded <= limits.succeeded + 1 && failed <= limits.failed + 1) {
    // The usual case: the finish that prunes has passed a limit by one run, the least recent goes.
    const beyond: RunRecord[] = [];
    if (succeeded > limits.succeeded) beyond.push(leastRecent(finished, true));
    if (failed > limits.failed) beyond.push(leastRecent(finished, false));
    return beyond;
  }
  const byRecency = [...finished].sort(compareByRecency);
  const beyond: RunRecord[] = [];
  const beyondFailed: RunRecord[] = [];
  let keptSucceeded = 0;
  let keptFailed = 0;
  for (const run of byRecency) {
    if (run.status === 'succeeded') {
      if (keptSucceeded < limits.succeeded) keptSucceeded += 1;
      else beyond.push(run);
    } else if (keptFailed < limits.failed) keptFailed += 1;
    else beyondFailed.push(run);
  }
  // Succeeded runs first, then failed and cancelled ones, each most recent first.
  for (const run of beyondFailed) beyond.push(run);
  return beyond;
}

/** The least recently finished of the succeeded runs (`succeeded`), or of the others. */
function leastRecent(finished: readonly RunRecord[], succeeded: boolean): RunRecord {
  let least: RunRecord | undefined;
  for (const run of finished) {
    if ((run.status === 'succeeded') === succeeded && (least === undefined || compareByRecency(run, least) > 0)) least = run;
  }
  return least as RunRecord;
}

function compareByRecency(a: RunRecord, b: RunRecord): number {
  return (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || compareNewestFirst(a, b);
}

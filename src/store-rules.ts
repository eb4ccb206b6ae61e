/**
 * Rules of the storage contract that every store applies the same way: which runs
 * are active, the order runs are handed out and listed in, and which finished runs
 * history pruning deletes. Stores that decide these in SQL or Lua mirror them; the
 * conformance suite checks they agree.
 */
import { ACTIVE_STATUSES, type JobSpec, type RunRecord, type RunStatus, type ScheduleSpec } from './store.js';

export function isActive(status: RunStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
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

/** Recovery order: the lease that expired first, then ID. */
export function compareLeaseOrder(a: RunRecord, b: RunRecord): number {
  return (a.leaseUntil ?? 0) - (b.leaseUntil ?? 0) || compareIds(a.id, b.id);
}

/**
 * The finished runs to delete so that at most `limits.succeeded` succeeded and
 * `limits.failed` failed-or-cancelled runs remain, keeping the most recently
 * finished ones.
 */
export function pruneHistory(
  finished: readonly RunRecord[],
  limits: { readonly succeeded: number; readonly failed: number },
): RunRecord[] {
  const byRecency = [...finished].sort(
    (a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0) || compareNewestFirst(a, b),
  );
  const succeeded = byRecency.filter((run) => run.status === 'succeeded');
  const failed = byRecency.filter((run) => run.status !== 'succeeded');
  return [...succeeded.slice(limits.succeeded), ...failed.slice(limits.failed)];
}

/** True when two specs define the same job (what `upsertJob` would write is already stored). */
export function sameSpec(a: JobSpec, b: JobSpec): boolean {
  return (
    a.name === b.name &&
    a.timezone === b.timezone &&
    a.concurrencyPolicy === b.concurrencyPolicy &&
    a.startingDeadlineMs === b.startingDeadlineMs &&
    a.history.succeeded === b.history.succeeded &&
    a.history.failed === b.history.failed &&
    sameSchedule(a.schedule, b.schedule)
  );
}

function sameSchedule(a: ScheduleSpec, b: ScheduleSpec): boolean {
  switch (a.kind) {
    case 'cron':
      return b.kind === 'cron' && a.expression === b.expression;
    case 'every':
      return b.kind === 'every' && a.everyMs === b.everyMs && a.anchor === b.anchor;
    case 'at':
      return b.kind === 'at' && a.at === b.at;
  }
}

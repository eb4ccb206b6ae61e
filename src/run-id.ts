/**
 * Deterministic run IDs. A tick's ID depends only on the job and the tick, so every
 * instance that plans the same tick names the same run, and the store's
 * "create if absent" makes each tick produce at most one run.
 */

/** Whole seconds since the epoch, as the ID shows them. */
export function unixSeconds(instant: number): number {
  return Math.floor(instant / 1000);
}

/** `nightly-report.1767233400` */
export function scheduledRunId(jobName: string, scheduledAt: number): string {
  return `${jobName}.${unixSeconds(scheduledAt)}`;
}

/** `nightly-report.manual.<key>` */
export function manualRunId(jobName: string, key: string): string {
  return `${jobName}.manual.${key}`;
}

/** `nightly-report.backfill.1767233400`: apart from scheduled runs, so a backfill re-runs ticks that already ran. */
export function backfillRunId(jobName: string, scheduledAt: number): string {
  return `${jobName}.backfill.${unixSeconds(scheduledAt)}`;
}

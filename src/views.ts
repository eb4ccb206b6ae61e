/** Store records as the public API shows them: instants as `Date`s, internals left out. */
import type { Draft } from './draft.js';
import { cloneJson } from './json-value.js';
import { anchorOf } from './planner.js';
import type { JobRecord, RunRecord } from './store.js';
import type { JobInfo, RunInfo } from './types.js';

export function toRunInfo(run: RunRecord): RunInfo {
  // Field by field rather than conditional spreads: every run's events build one of these.
  const info: Draft<RunInfo> = {
    id: run.id,
    jobName: run.jobName,
    scheduledAt: new Date(run.scheduledAt),
    trigger: run.trigger,
    status: run.status,
    attempt: run.attempt,
    createdAt: new Date(run.createdAt),
    readyAt: new Date(run.readyAt),
  };
  if (run.startedAt !== undefined) info.startedAt = new Date(run.startedAt);
  if (run.finishedAt !== undefined) info.finishedAt = new Date(run.finishedAt);
  if (run.error !== undefined) info.error = { name: run.error.name, message: run.error.message };
  // A copy: what the caller does to it must not reach the memory store's record (only runs with data pay).
  if (run.data !== undefined) info.data = cloneJson(run.data);
  const fanOut = run.fanOut;
  if (fanOut !== undefined) {
    info.completions = {
      total: fanOut.completions,
      parallelism: fanOut.parallelism,
      succeeded: fanOut.succeeded,
      failed: fanOut.failed,
      active: fanOut.active,
    };
  }
  return info;
}

export function toJobInfo(job: JobRecord, active: readonly RunRecord[], nextRunAt: number | undefined): JobInfo {
  const schedule = job.schedule;
  return {
    name: job.name,
    schedule:
      schedule.kind === 'cron'
        ? schedule.expression
        : schedule.kind === 'at'
          ? { at: new Date(schedule.at) }
          : { every: schedule.everyMs, anchor: new Date(anchorOf(schedule, job.createdAt)) },
    timezone: job.timezone,
    concurrencyPolicy: job.concurrencyPolicy,
    suspended: job.suspended,
    createdAt: new Date(job.createdAt),
    ...(job.lastScheduleTime === undefined ? {} : { lastScheduleTime: new Date(job.lastScheduleTime) }),
    ...(job.lastSuccessfulTime === undefined ? {} : { lastSuccessfulTime: new Date(job.lastSuccessfulTime) }),
    ...(nextRunAt === undefined ? {} : { nextRunAt: new Date(nextRunAt) }),
    finished: nextRunAt === undefined,
    active: active.map((run) => run.id),
    succeeded: job.succeeded,
    failed: job.failed,
    skipped: job.skipped,
    scheduledRuns: job.scheduledRuns,
    ...(job.startAt === undefined ? {} : { startAt: new Date(job.startAt) }),
    ...(job.endAt === undefined ? {} : { endAt: new Date(job.endAt) }),
    ...(job.jitterMs === undefined ? {} : { jitterMs: job.jitterMs }),
    ...(job.maxRuns === undefined ? {} : { maxRuns: job.maxRuns }),
  };
}

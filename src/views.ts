/** Store records as the public API shows them: instants as `Date`s, internals left out. */
import { defaultAnchor } from './planner.js';
import type { JobRecord, RunRecord } from './store.js';
import type { JobInfo, RunInfo } from './types.js';

export function toRunInfo(run: RunRecord): RunInfo {
  return {
    id: run.id,
    jobName: run.jobName,
    scheduledAt: new Date(run.scheduledAt),
    trigger: run.trigger,
    status: run.status,
    attempt: run.attempt,
    createdAt: new Date(run.createdAt),
    readyAt: new Date(run.readyAt),
    ...(run.startedAt === undefined ? {} : { startedAt: new Date(run.startedAt) }),
    ...(run.finishedAt === undefined ? {} : { finishedAt: new Date(run.finishedAt) }),
    ...(run.error === undefined ? {} : { error: { name: run.error.name, message: run.error.message } }),
    ...(run.data === undefined ? {} : { data: run.data }),
    ...(run.fanOut === undefined
      ? {}
      : {
          completions: {
            total: run.fanOut.completions,
            parallelism: run.fanOut.parallelism,
            succeeded: run.fanOut.succeeded,
            failed: run.fanOut.failed,
            active: run.fanOut.active,
          },
        }),
  };
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
          : { every: schedule.everyMs, anchor: new Date(schedule.anchor ?? defaultAnchor(job.createdAt)) },
    timezone: job.timezone,
    concurrencyPolicy: job.concurrencyPolicy,
    suspended: job.suspended,
    createdAt: new Date(job.createdAt),
    ...(job.lastScheduleTime === undefined ? {} : { lastScheduleTime: new Date(job.lastScheduleTime) }),
    ...(job.lastSuccessfulTime === undefined ? {} : { lastSuccessfulTime: new Date(job.lastSuccessfulTime) }),
    ...(nextRunAt === undefined ? {} : { nextRunAt: new Date(nextRunAt) }),
    active: active.map((run) => run.id),
    succeeded: job.succeeded,
    failed: job.failed,
    skipped: job.skipped,
  };
}

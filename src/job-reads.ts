/**
 * What the read API shows of the store's jobs: each with its active runs and the
 * next tick it will run, and its next ticks, within its window and its `maxRuns`.
 */
import { nextRunTick, ticksLeft } from './planner.js';
import type { Runtime } from './runtime.js';
import { batchesOf } from './batches.js';
import { isActive } from './store-rules.js';
import { ACTIVE_STATUSES, LIST_BATCH, type JobRecord, type ListJobsQuery, type RunRecord } from './store.js';
import type { JobInfo } from './types.js';
import { toJobInfo } from './views.js';

/** The job with its active runs (one store call). */
export async function jobInfoOf(rt: Runtime, record: JobRecord): Promise<JobInfo> {
  const active = await rt.call('listRuns', () => rt.store.listRuns({ jobName: record.name, statuses: ACTIVE_STATUSES }));
  return jobInfoAt(rt, record, active);
}

/** The jobs `query` selects, each with its active runs. */
export async function listJobInfos(rt: Runtime, query: ListJobsQuery | undefined): Promise<JobInfo[]> {
  const { store, call } = rt;
  const records = await call('listJobs', () => store.listJobs(query));
  if (store.listRunsOfJobs === undefined) return Promise.all(records.map((record) => jobInfoOf(rt, record)));
  // 1 + N / LIST_BATCH store calls instead of 1 + N: the active runs of LIST_BATCH jobs at a time.
  const active = new Map<string, RunRecord[]>();
  for (const jobNames of batchesOf(records.map((record) => record.name), LIST_BATCH)) {
    const runs = await call('listRunsOfJobs', () => store.listRunsOfJobs!({ jobNames, statuses: ACTIVE_STATUSES }));
    for (const run of runs) {
      if (!isActive(run.status)) continue; // whatever the store made of `statuses`
      const runs = active.get(run.jobName);
      if (runs === undefined) active.set(run.jobName, [run]);
      else runs.push(run);
    }
  }
  return records.map((record) => jobInfoAt(rt, record, active.get(record.name) ?? []));
}

/** The job's next `count` ticks after now (a run created ahead of its tick is still to come). */
export function nextTicks(rt: Runtime, record: JobRecord, count: number): Date[] {
  const schedule = rt.schedules.of(record);
  const ticks: Date[] = [];
  let after = rt.clock.now();
  const limit = Math.min(count, ticksLeft(record, after));
  for (let i = 0; i < limit; i += 1) {
    const tick = schedule.next(after);
    if (tick === undefined) break;
    ticks.push(new Date(tick));
    after = tick;
  }
  return ticks;
}

function jobInfoAt(rt: Runtime, record: JobRecord, active: readonly RunRecord[]): JobInfo {
  return toJobInfo(record, active, nextRunTick(rt.schedules.of(record), record, rt.clock.now()));
}

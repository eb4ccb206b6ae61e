/**
 * The planner's paged read of every stored job (`PlanLoop`'s loads): `LIST_JOBS_PAGE`
 * at a time, keeping the jobs of the partitions asked for, each with its first due
 * time worked out as its page arrives. Between pages the caller renews its leases as
 * the heartbeat would: reading a million jobs takes minutes on a busy machine, longer
 * than the lease, and a load that outlived its lease would start over at the next
 * heartbeat, for ever. (Every job is read and those of other partitions skipped: the
 * store's pages are by name.)
 */
import { partitionOf } from './partition.js';
import { firstDue, plannable } from './plan-step.js';
import type { Runtime } from './runtime.js';
import { LIST_JOBS_PAGE, type JobRecord, type ListJobsQuery } from './store.js';

/** A loaded job the planner leaves alone (see `plannable`). */
export const NOT_PLANNABLE = -1;

export interface LoadedJob {
  readonly record: JobRecord;
  readonly partition: number;
  /** Its first due time (undefined: none; `NOT_PLANNABLE`), not worked out when polling. */
  readonly dueAt: number | undefined;
}

export interface JobLoad {
  /** The jobs of the partitions asked for. */
  readonly loaded: LoadedJob[];
  /** Every stored job (not when polling). */
  readonly read: JobRecord[];
}

/**
 * Reads every stored job, keeping those of `partitions` (of `count`).
 * `poll`: the heartbeat's re-read of a store without notifications (no due times, no
 * `read`). `between` is awaited between pages (the lease renewal); the load ends once
 * `stopped()`. Undefined when a page could not be read (reported) or the planner stopped.
 */
export async function loadJobs(
  rt: Runtime,
  partitions: ReadonlySet<number>,
  count: number,
  poll: boolean,
  stopped: () => boolean,
  between: () => Promise<void>,
): Promise<JobLoad | undefined> {
  const { clock, io, store } = rt;
  const loaded: LoadedJob[] = [];
  const read: JobRecord[] = [];
  for (let after: string | undefined; ; ) {
    const query: ListJobsQuery = after === undefined ? { limit: LIST_JOBS_PAGE } : { after, limit: LIST_JOBS_PAGE };
    const page = await io('listJobs', () => store.listJobs(query));
    if (page === undefined || stopped()) return undefined;
    if (!poll) for (const record of page) read.push(record);
    for (const record of page) {
      const partition = partitionOf(record.name, count);
      if (!partitions.has(partition)) continue;
      // The planning maths of a million jobs is minutes of CPU on a busy machine: done page by page, between
      // the lease renewals, not in one go after the last page, where it outlived the lease (a 1M-job
      // load on Redis at load 18 lost its lease after each load and loaded every job again, four times).
      const dueAt = poll ? undefined : plannable(rt, record) ? firstDue(rt, record, clock.now()) : NOT_PLANNABLE;
      loaded.push({ record, partition, dueAt });
    }
    // A short page is the last; a long one, a store that ignores the limit (it listed every job).
    if (page.length !== LIST_JOBS_PAGE) return { loaded, read };
    after = page[page.length - 1]?.name;
    await between();
  }
}

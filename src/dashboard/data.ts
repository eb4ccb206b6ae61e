/**
 * The dashboard's reads of the store, through the public `Store` contract only. A
 * page makes a fixed number of store calls whatever it shows: the jobs page reads
 * every job once and the runs of the jobs on the page in one batch (see
 * `runsOfJobs`), never one call per row on the critical path of another.
 */
import type { IndexRecord, JobRecord, RunRecord, Store } from '../store.js';

/** Jobs on one page of the jobs list. */
export const JOBS_PER_PAGE = 100;
/** Runs listed on a job's page. */
export const RUNS_PER_JOB_PAGE = 50;
/** Concurrent `listRuns` calls when a store cannot answer for several jobs at once. */
const READ_CONCURRENCY = 16;

export interface JobsPageData {
  /** Jobs matching the filter, by name. */
  readonly total: number;
  readonly jobs: readonly JobRecord[];
  /** Each job's runs as the store keeps them (active and history), newest first. */
  readonly runs: ReadonlyMap<string, readonly RunRecord[]>;
  readonly page: number;
  readonly pages: number;
}

export async function loadJobsPage(store: Store, query: { filter: string; page: number }): Promise<JobsPageData> {
  const filter = query.filter.toLowerCase();
  const all = [...(await store.listJobs())]
    .filter((job) => filter === '' || job.name.toLowerCase().includes(filter))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const pages = Math.max(1, Math.ceil(all.length / JOBS_PER_PAGE));
  const page = Math.min(Math.max(1, query.page), pages);
  const jobs = all.slice((page - 1) * JOBS_PER_PAGE, page * JOBS_PER_PAGE);
  const runs = await runsOfJobs(store, jobs.map((job) => job.name));
  return { total: all.length, jobs, runs, page, pages };
}

/**
 * The runs of several jobs: one call of the store's `listRunsOfJobs` when it has it
 * (the memory, Redis and Postgres stores do), otherwise `listRuns` per job, at most
 * `READ_CONCURRENCY` at a time. A job's runs are bounded by its history limits plus
 * its active runs, so no limit is asked for.
 */
export async function runsOfJobs(store: Store, names: readonly string[]): Promise<Map<string, readonly RunRecord[]>> {
  const result = new Map<string, readonly RunRecord[]>(names.map((name) => [name, []]));
  if (names.length === 0) return result;
  if (store.listRunsOfJobs !== undefined) {
    const grouped = new Map<string, RunRecord[]>();
    for (const run of await store.listRunsOfJobs({ jobNames: names })) {
      let list = grouped.get(run.jobName);
      if (list === undefined) grouped.set(run.jobName, (list = []));
      list.push(run);
    }
    for (const [name, list] of grouped) if (result.has(name)) result.set(name, list);
    return result;
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++] as string;
      result.set(name, await store.listRuns({ jobName: name }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, names.length) }, worker));
  return result;
}

export interface JobPageData {
  readonly job: JobRecord;
  readonly runs: readonly RunRecord[];
}

export async function loadJobPage(store: Store, name: string): Promise<JobPageData | undefined> {
  const [job, runs] = await Promise.all([store.getJob(name), store.listRuns({ jobName: name, limit: RUNS_PER_JOB_PAGE })]);
  return job === undefined ? undefined : { job, runs };
}

export interface RunPageData {
  readonly run: RunRecord;
  readonly job: JobRecord | undefined;
  readonly indices: readonly IndexRecord[];
}

export async function loadRunPage(store: Store, id: string): Promise<RunPageData | undefined> {
  const run = await store.getRun(id);
  if (run === undefined) return undefined;
  const [job, indices] = await Promise.all([store.getJob(run.jobName), run.fanOut === undefined ? [] : store.listIndices(id)]);
  return { run, job, indices };
}

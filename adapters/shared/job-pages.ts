/**
 * `listJobs()` without a limit, for the networked stores (Redis, Postgres): every job,
 * read through the store's own keyset read a page at a time.
 */
import { LIST_JOBS_PAGE, type JobRecord } from '../../src/store.js';

/**
 * Every job after `after` (all without it), read a page of `LIST_JOBS_PAGE` at a time
 * through `page` (a store's keyset read), never holding every job in one reply. Pages
 * are separate reads, not one snapshot.
 */
export async function allJobPages(
  page: (after: string | undefined, limit: number) => Promise<readonly JobRecord[]>,
  after?: string,
): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  for (let last = after; ; ) {
    const next = await page(last, LIST_JOBS_PAGE);
    jobs.push(...next);
    if (next.length < LIST_JOBS_PAGE) return jobs;
    last = next[next.length - 1]?.name;
  }
}

/**
 * A planner whose load of every job outlasts its lease (a million jobs read on a busy
 * machine take minutes): it reads them a page at a time and renews the lease between
 * pages, so it keeps the lease and plans, instead of losing it and starting the load
 * over at every heartbeat. The store here charges 12 ms of (fake) time per job read.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/index.js';
import type { JobRecord, ListJobsQuery } from '../../src/store.js';
import { harness, stopWhileAdvancing, T0 } from '../helpers.js';

const JOBS = 3_000;
const MS_PER_JOB = 12; // 36 s for every job: longer than the 30 s lease

class SlowListing extends MemoryStore {
  readonly pages: number[] = [];
  constructor(readonly clock: FakeClock) {
    super();
  }

  override async listJobs(query?: ListJobsQuery): Promise<readonly JobRecord[]> {
    const jobs = await super.listJobs(query);
    this.pages.push(jobs.length);
    this.clock.set(this.clock.now() + jobs.length * MS_PER_JOB);
    return jobs;
  }
}

describe('a planner that loads more jobs than its lease lasts', () => {
  it('reads them a page at a time, keeps its lease between pages, and plans', async () => {
    const clock = new FakeClock(T0);
    const store = new SlowListing(clock);
    const { scheduler } = harness({ clock, store, leaseMs: 30_000 });
    const runs: string[] = [];
    for (let i = 0; i < JOBS; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
    scheduler.register({ name: 'minutely', schedule: '* * * * *', handler: ({ runId }) => void runs.push(runId) });
    await scheduler.start();
    await clock.advance('2m');
    expect(scheduler.isPlanner).toBe(true);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    // The start's sync read the (empty) store once, then the planner every job a page at a time, once.
    expect(store.pages).toEqual([0, 1_000, 1_000, 1_000, 1]);
    await stopWhileAdvancing(scheduler, clock, '1s');
  });
});

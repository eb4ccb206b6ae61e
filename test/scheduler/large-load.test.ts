/**
 * A planner whose load of every job outlasts its lease (a million jobs read on a busy
 * machine take minutes): it reads them a page at a time and renews the lease between
 * pages, so it keeps the lease and plans, instead of losing it and starting the load
 * over at every heartbeat. The store here charges 12 ms of (fake) time per job read.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/testing/index.js';
import { MemoryStore, type Scheduler } from '../../src/index.js';
import type { JobRecord, ListJobsQuery, UpsertJobInput, UpsertJobResult } from '../../src/store.js';
import { harness, stopWhileAdvancing, T0 } from '../helpers.js';

const JOBS = 3_000;
const MS_PER_JOB = 12; // 36 s for every job: longer than the 30 s lease

class SlowListing extends MemoryStore {
  readonly pages: number[] = [];
  /** Whether reads take their time (not while the jobs are first written). */
  slow = false;
  constructor(readonly clock: FakeClock) {
    super();
  }

  override async listJobs(query?: ListJobsQuery): Promise<readonly JobRecord[]> {
    const jobs = await super.listJobs(query);
    if (!this.slow) return jobs;
    this.pages.push(jobs.length);
    this.clock.set(this.clock.now() + jobs.length * MS_PER_JOB);
    return jobs;
  }
}

/** A store whose writes take 12 ms of (fake) time per job: writing every job outlasts the lease. */
class SlowWriting extends SlowListing {
  override async upsertJobs(inputs: readonly UpsertJobInput[]): Promise<readonly UpsertJobResult[]> {
    const results = await super.upsertJobs(inputs);
    this.clock.set(this.clock.now() + inputs.length * MS_PER_JOB);
    return results;
  }
}

function register(scheduler: Scheduler, runs: string[]): void {
  for (let i = 0; i < JOBS; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
  scheduler.register({ name: 'minutely', schedule: '* * * * *', handler: ({ runId }) => void runs.push(runId) });
}

/** Starts an instance with every job on `store`, 2 minutes on: it plans (the minutely job ran); stops it. */
async function expectPlans(clock: FakeClock, store: MemoryStore): Promise<void> {
  const { scheduler } = harness({ clock, store, leaseMs: 30_000 });
  const runs: string[] = [];
  register(scheduler, runs);
  await scheduler.start();
  await clock.advance('2m');
  expect(scheduler.isPlanner).toBe(true);
  expect(runs.length).toBeGreaterThanOrEqual(1);
  await stopWhileAdvancing(scheduler, clock, '1s');
}

describe('a planner that loads more jobs than its lease lasts', () => {
  it('reads them a page at a time, keeps its lease between pages, and plans', async () => {
    const clock = new FakeClock(T0);
    const store = new SlowListing(clock);
    const first = harness({ clock, store, leaseMs: 30_000 }).scheduler;
    register(first, []);
    await first.start();
    await first.stop();
    // A restart: every job is stored already, and reading them takes longer than the lease.
    store.slow = true;
    await expectPlans(clock, store);
    // The planner read every job a page at a time, once; the sync compared with what it read.
    expect(store.pages).toEqual([1_000, 1_000, 1_000, 1]);
  });

  it('keeps its leases while it writes more jobs than its lease lasts, and plans what it wrote without reading it back', async () => {
    const clock = new FakeClock(T0);
    const store = new SlowWriting(clock);
    store.slow = true;
    await expectPlans(clock, store);
    // The leases were taken before the jobs were written, and kept while they were: the one read found none.
    expect(store.pages).toEqual([0]);
  });
});

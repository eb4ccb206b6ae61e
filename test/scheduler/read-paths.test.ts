/**
 * Read paths (issue 15 item 6): `listJobs()` reads active runs in batches of
 * `LIST_BATCH` jobs instead of once per job, and the planner plans the records its
 * own registrations return instead of reading each job back on its notification,
 * while another writer's change still reloads the job.
 */
import { afterEach, expect, it } from 'vitest';
import { countingStore, gate, harness, stopWhileAdvancing } from '../helpers.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

it('lists 2,500 jobs with their active runs in 1 + 3 store calls, as getJob shows each', async () => {
  const { store, calls } = countingStore();
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:30Z' });
  const busy = gate();
  for (let i = 0; i < 2_495; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: `${i % 60} ${i % 24} 1 1 *`, handler: () => {} });
  for (let i = 0; i < 5; i += 1) scheduler.register({ name: `busy-${i}`, schedule: '* * * * *', handler: busy.handler });
  await scheduler.start();
  cleanup = async () => {
    busy.release();
    await stopWhileAdvancing(scheduler, clock);
  };
  await clock.advance('1m');
  expect(busy.started).toBe(5);

  calls.clear();
  const jobs = await scheduler.listJobs();
  expect(Object.fromEntries(calls)).toEqual({ listJobs: 1, listActiveRuns: 3 }); // was 1 listJobs + 2,500 listRuns
  expect(jobs).toHaveLength(2_500);
  const byName = new Map(jobs.map((job) => [job.name, job]));
  for (const name of ['busy-0', 'busy-4', 'yearly-0', 'yearly-2494']) expect(byName.get(name)).toEqual(await scheduler.getJob(name));
  expect(byName.get('busy-3')?.active).toHaveLength(1);
  expect(byName.get('yearly-7')?.active).toEqual([]);
});

it('plans the jobs it registers from the write, and reloads a job another writer changed', async () => {
  const { store, inner, calls } = countingStore();
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:30Z' });
  await scheduler.start();
  cleanup = () => stopWhileAdvancing(scheduler, clock);
  expect(scheduler.isPlanner).toBe(true);
  const fired = new Map<string, number>();
  calls.clear();
  for (let i = 0; i < 50; i += 1) {
    const name = `job-${i}`;
    scheduler.register({ name, schedule: '* * * * *', handler: () => void fired.set(name, (fired.get(name) ?? 0) + 1) });
  }
  await clock.advance('1m');
  expect(calls.get('upsertJobs')).toBeGreaterThanOrEqual(1);
  expect(calls.get('getJob') ?? 0).toBe(0); // was one per job: each registration's notification re-read it
  expect(fired.size).toBe(50);

  // Another writer suspends job-0: its notification is not an echo, so the planner reads the job again.
  await inner.setSuspended({ name: 'job-0', suspended: true, now: clock.now() });
  fired.clear();
  await clock.advance('1m');
  expect(calls.get('getJob')).toBe(1);
  expect(fired.has('job-0')).toBe(false);
  expect(fired.size).toBe(49);
});

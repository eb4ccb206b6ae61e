import { expect, it } from 'vitest';
import { MemoryStore, type Store } from '../../src/index.js';
import { harness } from '../helpers.js';

/** Counts the store calls made through it, by method. */
function countingStore(): { store: Store; calls: Map<string, number> } {
  const inner = new MemoryStore();
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(property), (calls.get(String(property)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}

it('with 100,000 registered jobs and none due, holds a constant number of timers and plans nothing', async () => {
  const { store, calls } = countingStore();
  const { clock, scheduler } = harness({ store: store as MemoryStore, start: '2026-03-01T00:00:00Z' });
  for (let i = 0; i < 100_000; i += 1) {
    scheduler.register({ name: `yearly-${i}`, schedule: `${i % 60} ${i % 24} 1 1 *`, handler: () => {} });
  }
  await scheduler.start();
  expect(clock.pendingTimers).toBeLessThanOrEqual(3); // heartbeat, planner, executor: not one per job
  calls.clear();
  await clock.advance('1h');
  expect(calls.get('scheduleRun') ?? 0).toBe(0);
  expect(calls.get('getJob') ?? 0).toBe(0);
  // An hour of idling is a few heartbeats' worth of calls, independent of the number of jobs.
  const total = [...calls.values()].reduce((sum, n) => sum + n, 0);
  expect(total).toBeLessThan(2_000);
  expect(clock.pendingTimers).toBeLessThanOrEqual(3);
  await scheduler.stop();
}, 60_000);

it('writes registrations in batches; a restart reads the jobs once and writes only what changed', async () => {
  const { store, calls } = countingStore();
  const first = harness({ store: store as MemoryStore });
  const define = (scheduler: typeof first.scheduler, changed: boolean) => {
    for (let i = 0; i < 500; i += 1) {
      scheduler.register({ name: `job-${i}`, schedule: changed && i === 7 ? '*/5 * * * *' : '0 3 * * *', handler: () => {} });
    }
  };
  define(first.scheduler, false);
  await first.scheduler.start();
  await first.scheduler.stop();
  expect(calls.get('upsertJobs')).toBe(1); // 500 new jobs: one batch
  calls.clear();
  const second = harness({ store: store as MemoryStore, clock: first.clock });
  define(second.scheduler, true);
  await second.scheduler.start();
  expect(calls.get('upsertJobs')).toBe(1); // the one changed job
  expect((await second.scheduler.getJob('job-7'))?.schedule).toBe('*/5 * * * *');
  await second.scheduler.stop();
});

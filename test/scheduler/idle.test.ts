import { describe, expect, it } from 'vitest';
import { countingStore, harness } from '../helpers.js';

it('with 100,000 registered jobs and none due, holds a constant number of timers and plans nothing', async () => {
  const { store, calls } = countingStore();
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
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
  const first = harness({ store });
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
  const second = harness({ store, clock: first.clock });
  define(second.scheduler, true);
  await second.scheduler.start();
  expect(calls.get('upsertJobs')).toBe(1); // the one changed job
  expect((await second.scheduler.getJob('job-7'))?.schedule).toBe('*/5 * * * *');
  await second.scheduler.stop();
});

it('an idle heartbeat makes each of its store calls once: one look for ready runs, one of each housekeeping call', async () => {
  const { store, calls } = countingStore();
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
  for (let i = 0; i < 2_000; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
  await scheduler.start();
  await clock.advance('1m');
  calls.clear();
  await clock.advance('10m'); // 60 heartbeats (leaseMs 30 s: one every 10 s)
  const perBeat = Object.fromEntries([...calls].map(([name, n]) => [name, n / 60]));
  expect(perBeat).toEqual({ findReadyRuns: 1, recoverExpiredRuns: 1, expirePendingRuns: 1, deleteExpiredRuns: 1 });
  await scheduler.stop();
});

it('an idle heartbeat on a store with sweepRuns makes the three housekeeping calls as one', async () => {
  const { store, calls } = countingStore({ sweepRuns: true });
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
  scheduler.register({ name: 'yearly', schedule: '0 0 1 1 *', handler: () => {} });
  await scheduler.start();
  await clock.advance('1m');
  calls.clear();
  await clock.advance('10m'); // 60 heartbeats
  expect(Object.fromEntries([...calls].map(([name, n]) => [name, n / 60]))).toEqual({ findReadyRuns: 1, sweepRuns: 1 });
  await scheduler.stop();
});

describe('an idle heartbeat with 12 partitions', () => {
  /** The store calls of an idle heartbeat, as with one partition. */
  const STORE_CALLS = { findReadyRuns: 1, recoverExpiredRuns: 1, expirePendingRuns: 1, deleteExpiredRuns: 1 };

  /** Store and lock calls per heartbeat of one idle instance, 60 heartbeats in. */
  async function perBeat(renewAll: boolean): Promise<Record<string, number>> {
    const { store, calls } = countingStore({ partitions: 12, lock: true, renewAll });
    const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
    for (let i = 0; i < 2_000; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
    await scheduler.start();
    await clock.advance('1m');
    expect(scheduler.plannedPartitions).toHaveLength(12);
    calls.clear();
    await clock.advance('10m'); // 60 heartbeats
    await scheduler.stop();
    return Object.fromEntries([...calls].filter(([name]) => !['lock.release', 'lock', 'watch'].includes(name)).map(([name, n]) => [name, n / 60]));
  }

  it('renews its 12 partition leases and its member lease in one renewAll call, and lists the leases once', async () => {
    expect(await perBeat(true)).toEqual({
      ...STORE_CALLS,
      'lock.renewAll': 1,
      'lock.list': 1,
    });
  });

  it('renews each lease on its own with a lock without renewAll', async () => {
    expect(await perBeat(false)).toEqual({ ...STORE_CALLS, 'lock.renew': 13, 'lock.list': 1 });
  });
});

it('sends lock.list along with the renewal, before the renewal resolves (one round trip on Redis), 12 partitions', async () => {
  const { store } = countingStore({ partitions: 12 });
  const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
  const order: string[] = [];
  const lock = store.lock!();
  const renewAll = lock.renewAll!.bind(lock);
  const list = lock.list!.bind(lock);
  lock.renewAll = (input) => {
    order.push('renew');
    return renewAll(input).then((answers) => (order.push('renewed'), answers));
  };
  lock.list = (input) => (order.push('list'), list(input));
  scheduler.register({ name: 'yearly', schedule: '0 0 1 1 *', handler: () => {} });
  await scheduler.start();
  await clock.advance('1m');
  order.length = 0;
  await clock.advance('30s'); // 3 heartbeats
  expect(order).toEqual(Array.from({ length: 3 }, () => ['renew', 'list', 'renewed']).flat());
  await scheduler.stop();
});

describe('a lone instance in its first leaseMs, 12 partitions', () => {
  /** When renewAll and list were called over the first minute (ms since start). */
  async function firstMinute(failRenewalsUntil = 0): Promise<{ renewals: number[]; lists: number[]; planned: number }> {
    const { store } = countingStore({ partitions: 12 });
    const { clock, scheduler } = harness({ store, start: '2026-03-01T00:00:00Z' });
    const t0 = clock.now();
    const renewals: number[] = [];
    const lists: number[] = [];
    const lock = store.lock!();
    const renewAll = lock.renewAll!.bind(lock);
    const list = lock.list!.bind(lock);
    lock.renewAll = (input) => {
      renewals.push(clock.now() - t0);
      return clock.now() - t0 < failRenewalsUntil ? Promise.reject(new Error('store down')) : renewAll(input);
    };
    lock.list = (input) => {
      lists.push(clock.now() - t0);
      return list(input);
    };
    scheduler.on('error', () => {});
    for (let i = 0; i < 100; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
    await scheduler.start();
    await clock.advance('1m');
    const planned = scheduler.plannedPartitions.length;
    await scheduler.stop();
    return { renewals, lists, planned };
  }

  it('looks for newcomers leaseMs / 10 and leaseMs / 5 after joining, then at its heartbeats; renews never more than leaseMs / 2 apart', async () => {
    const { renewals, lists, planned } = await firstMinute();
    expect(planned).toBe(12);
    // Before: every 3 s for the first 30 s (10 looks between the heartbeats), each an event-loop wake of an idle instance.
    expect(lists.filter((at) => at <= 30_000)).toEqual([0, 3_000, 6_000, 10_000, 20_000, 30_000]);
    const gaps = renewals.slice(1).map((at, i) => at - (renewals[i] as number));
    expect(Math.max(...gaps, renewals[0] as number)).toBeLessThanOrEqual(15_000);
  });

  it('after a failed renewal renews again at the next refresh (no leaseMs / 6 wait)', async () => {
    const { renewals, planned, lists } = await firstMinute(7_000);
    expect(planned).toBe(12);
    const failed = renewals.filter((at) => at < 7_000);
    expect(failed.length).toBeGreaterThan(0);
    // The first try after the failures comes at the next refresh, not leaseMs / 6 after the failed one.
    const next = renewals.find((at) => at >= 7_000) as number;
    expect(next).toBe(lists.find((at) => at > (failed.at(-1) as number)));
  });
});

/**
 * How soon instances share the partitions out, on a fake clock: instances that start
 * together, and a newcomer beside a running instance. Settled = every partition held, each instance at
 * its fair share `ceil(partitions / instances)` or one below.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { T0 } from '../helpers.js';

const LEASE_MS = 3_000;
const PARTITIONS = 12;
const JOBS = 1_500;

function instance(store: MemoryStore, clock: FakeClock, id: string): Scheduler {
  const scheduler = new Scheduler({ store, clock, instanceId: id, leaseMs: LEASE_MS, logger: false });
  for (let i = 0; i < JOBS; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
  return scheduler;
}

function settled(schedulers: readonly Scheduler[]): boolean {
  const held = schedulers.map((s) => s.plannedPartitions);
  const fair = Math.ceil(PARTITIONS / schedulers.length);
  return new Set(held.flat()).size === PARTITIONS && held.every((h) => h.length === fair || h.length === fair - 1);
}

/** Fake milliseconds from now until the partitions are shared out (polled every 50 ms), at most 30 s. */
async function timeToSettle(clock: FakeClock, schedulers: readonly Scheduler[]): Promise<number> {
  const from = clock.now();
  while (!settled(schedulers) && clock.now() - from < 30_000) await clock.advance(50);
  return clock.now() - from;
}

describe('sharing the partitions out, how soon', () => {
  it('three instances that start together share 12 partitions 4/4/4 within leaseMs / 5', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore({ partitions: PARTITIONS });
    const schedulers = ['a', 'b', 'c'].map((id) => instance(store, clock, id));
    const started = Promise.all(schedulers.map((s) => s.start()));
    const ms = await timeToSettle(clock, schedulers);
    await started;
    // Before: 1,300 ms (the first took every partition and gave the surplus back at its next heartbeat).
    expect(ms).toBeLessThanOrEqual(LEASE_MS / 5);
    expect(settled(schedulers)).toBe(true);
    for (const s of schedulers) await s.stop();
  });

  it('a newcomer beside a running instance gets half of 12 partitions within a heartbeat of the running one (it gives back at its heartbeat)', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore({ partitions: PARTITIONS });
    const a = instance(store, clock, 'a');
    await a.start();
    await clock.advance('10s');
    expect(a.plannedPartitions).toHaveLength(PARTITIONS);
    const b = instance(store, clock, 'b');
    const started = b.start();
    const ms = await timeToSettle(clock, [a, b]);
    await started;
    expect(ms).toBeLessThanOrEqual(LEASE_MS / 3 + LEASE_MS / 10);
    expect(settled([a, b])).toBe(true);
    await a.stop();
    await b.stop();
  });
});

/**
 * A restart with unchanged jobs (a deploy that changes nothing): how many times the
 * new instance reads each stored job before it plans, counted at the store.
 */
import { expect, it } from 'vitest';
import { MemoryStore, Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import type { JobRecord } from '../../src/store.js';

const JOBS = 3_000;

/** A memory store that counts the job records its reads return. */
function readCounting(inner: MemoryStore): { store: MemoryStore; read: { records: number; calls: Map<string, number> } } {
  const read = { records: 0, calls: new Map<string, number>() };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (property !== 'listJobs' && property !== 'getJob') return result;
        read.calls.set(property, (read.calls.get(property) ?? 0) + 1);
        return (result as Promise<JobRecord[] | JobRecord | undefined>).then((records) => {
          read.records += Array.isArray(records) ? records.length : records === undefined ? 0 : 1;
          return records;
        });
      };
    },
  });
  return { store, read };
}

function register(scheduler: Scheduler): void {
  for (let i = 0; i < JOBS; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: '0 0 1 1 *', handler: () => {} });
}

it.each([1, 12])('a restart with unchanged jobs reads each stored job once (%i partitions)', async (partitions) => {
  const clock = new FakeClock('2026-03-01T00:00:00Z');
  const inner = new MemoryStore({ partitions });
  const first = new Scheduler({ store: inner, clock, logger: false });
  register(first);
  await first.start();
  await clock.advance('1m');
  await first.stop();
  const { store, read } = readCounting(inner);
  const second = new Scheduler({ store, clock, logger: false });
  register(second);
  await second.start();
  expect(second.plannedPartitions).toHaveLength(partitions);
  expect((await second.health()).lastPlanAt).toBeDefined();
  await clock.advance('1m');
  expect(read.records / JOBS).toBe(1);
  await second.stop();
});

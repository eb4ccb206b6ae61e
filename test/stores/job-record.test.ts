/** Job records as every store builds them (src/job-record.ts): what jobs have in common is one object, and each job stays its own. */
import { expect, it } from 'vitest';
import { toJob } from '../../adapters/postgres/records.js';
import { decodeJob } from '../../adapters/redis/codec.js';
import { DEFAULT_HISTORY, jobRecord } from '../../src/job-record.js';
import { cronSpec } from '../../src/schedule/index.js';
import type { JobRecord } from '../../src/store.js';
import { eventsOf, harness } from '../helpers.js';

const STATE = { suspended: false, createdAt: 1, cursor: 2, succeeded: 0, failed: 0, skipped: 0, scheduledRuns: 0 };
const spec = (name: string, history = { succeeded: 3, failed: 1 }) => ({
  name,
  schedule: { kind: 'cron', expression: '0 0 1 1 *' },
  timezone: 'UTC',
  concurrencyPolicy: 'Allow',
  retryLimit: 6,
  history,
});

it('leaves out the optional fields that are absent or null, and gives every job without backfills one frozen empty list', () => {
  const a = jobRecord({ ...spec('a'), startAt: null, fanOut: null } as never, { ...STATE, backfills: [], lastScheduleTime: null } as never);
  const b = jobRecord(spec('b') as never, { ...STATE, backfills: [] });
  expect(Object.keys(a)).not.toContain('startAt');
  expect(Object.keys(a)).not.toContain('fanOut');
  expect(Object.keys(a)).not.toContain('lastScheduleTime');
  expect(a.retryLimit).toBe(6);
  expect(a.backfills).toBe(b.backfills);
  expect(Object.isFrozen(a.backfills)).toBe(true);
  const range = { id: 'r', next: 1, to: 2 };
  expect(jobRecord(spec('c') as never, { ...STATE, backfills: [range] }).backfills).toEqual([range]);
});

it('reads jobs on one cron expression back with one schedule and one history object, on Redis and Postgres', () => {
  const redis = (name: string, history?: { succeeded: number; failed: number }) =>
    decodeJob([['spec', JSON.stringify(spec(name, history)), 'createdAt', '1', 'cursor', '2'], []]);
  const postgres = (name: string, history?: { succeeded: number; failed: number }) => toJob({ ...spec(name, history), ...STATE, backfills: [], fanOut: null, startAt: null });
  for (const read of [redis, postgres]) {
    const [a, b] = [read('a'), read('b')];
    expect(a.schedule).toBe(cronSpec('0 0 1 1 *'));
    expect(b.schedule).toBe(a.schedule);
    expect(a.history).toBe(DEFAULT_HISTORY);
    expect(b.history).toBe(DEFAULT_HISTORY);
    // Other limits are the job's own.
    expect(read('c', { succeeded: 5, failed: 1 }).history).toEqual({ succeeded: 5, failed: 1 });
    expect('startAt' in a).toBe(false);
  }
});

it('keeps jobs that share their schedule independent: removing one, or registering it again on another schedule, leaves the other as it was', async () => {
  const { clock, store, scheduler, log } = harness();
  const handler = () => {};
  scheduler.register({ name: 'a', schedule: '*/5 * * * *', handler });
  scheduler.register({ name: 'b', schedule: '*/5 * * * *', handler });
  await scheduler.start();
  const [a, b] = [(await store.getJob('a')) as JobRecord, (await store.getJob('b')) as JobRecord];
  expect(b.schedule).toBe(a.schedule);
  expect(b.history).toBe(a.history);
  await clock.advance('5m');
  expect(eventsOf(log, 'run:started')).toEqual(['a.1767225900#1', 'b.1767225900#1']);
  await scheduler.remove('a');
  scheduler.register({ name: 'a', schedule: '*/10 * * * *', history: { succeeded: 1, failed: 1 }, handler });
  await clock.advance('10m');
  expect(eventsOf(log, 'run:started').slice(2)).toEqual(['a.1767226200#1', 'b.1767226200#1', 'b.1767226500#1']);
  expect((await store.getJob('a'))?.schedule).toEqual({ kind: 'cron', expression: '*/10 * * * *' });
  expect((await store.getJob('b'))?.schedule).toBe(b.schedule);
  expect((await store.getJob('b'))?.history).toBe(DEFAULT_HISTORY);
  expect((await store.getJob('a'))?.history).toEqual({ succeeded: 1, failed: 1 });
  await scheduler.stop();
});

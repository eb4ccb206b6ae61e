/** ScheduleCache: jobs that share a schedule share its compiled form; only an unanchored `every` depends on the job's creation. */
import { expect, it } from 'vitest';
import { ScheduleCache } from '../../src/schedule-cache.js';
import { cronSpec } from '../../src/schedule/index.js';
import { at } from './helpers.js';

it('gives one frozen spec object per cron expression text', () => {
  const spec = cronSpec('0 9 * * 1-5');
  expect(cronSpec('0 9 * * 1-5')).toBe(spec);
  expect(cronSpec('0 10 * * 1-5')).not.toBe(spec);
  expect(Object.isFrozen(spec)).toBe(true);
  expect(spec).toEqual({ kind: 'cron', expression: '0 9 * * 1-5' });
});

it('compiles a cron spec once for every job that holds it, whatever their creation times', () => {
  const cache = new ScheduleCache();
  const schedule = cronSpec('*/5 * * * *');
  const first = cache.of({ schedule, timezone: 'UTC', createdAt: 1_000 });
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: 2_000 })).toBe(first);
  // Equal specs that are different objects still share through the key.
  expect(cache.of({ schedule: { kind: 'cron', expression: '*/5 * * * *' }, timezone: 'UTC', createdAt: 3_000 })).toBe(first);
  const inNewYork = cache.of({ schedule, timezone: 'America/New_York', createdAt: 1_000 });
  expect(inNewYork).not.toBe(first);
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: 1_000 })).toBe(first);
});

it('anchors an unanchored every on each job’s own creation, even when the jobs share the spec object', () => {
  const cache = new ScheduleCache();
  const schedule = { kind: 'every', everyMs: 60_000 } as const;
  const early = cache.of({ schedule, timezone: 'UTC', createdAt: at('2026-01-01T00:00:10.500Z') });
  const late = cache.of({ schedule, timezone: 'UTC', createdAt: at('2026-01-01T00:00:20Z') });
  expect(early.next(at('2026-01-01T00:00:30Z'))).toBe(at('2026-01-01T00:01:10Z'));
  expect(late.next(at('2026-01-01T00:00:30Z'))).toBe(at('2026-01-01T00:01:20Z'));
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: at('2026-01-01T00:00:10.500Z') }).next(0)).toBe(early.next(0));
});

it('finds an every or at schedule by what defines it, whatever the time zone', () => {
  const cache = new ScheduleCache();
  const every = cache.of({ schedule: { kind: 'every', everyMs: 60_000, anchor: 5 }, timezone: 'UTC', createdAt: 1 });
  expect(cache.of({ schedule: { kind: 'every', everyMs: 60_000, anchor: 5 }, timezone: 'Asia/Tokyo', createdAt: 2 })).toBe(every);
  expect(cache.of({ schedule: { kind: 'every', everyMs: 30_000, anchor: 5 }, timezone: 'UTC', createdAt: 1 })).not.toBe(every);
  const once = cache.of({ schedule: { kind: 'at', at: 1_000 }, timezone: 'UTC', createdAt: 1 });
  expect(cache.of({ schedule: { kind: 'at', at: 1_000 }, timezone: 'Europe/Paris', createdAt: 9 })).toBe(once);
  expect(once.next(0)).toBe(1_000);
});

it('cuts a schedule to each job’s own startAt/endAt window, even when the jobs share the spec object', () => {
  const cache = new ScheduleCache();
  const schedule = cronSpec('0 * * * *');
  const open = cache.of({ schedule, timezone: 'UTC', createdAt: 0 });
  const windowed = cache.of({ schedule, timezone: 'UTC', createdAt: 0, startAt: at('2026-01-01T05:00:00Z'), endAt: at('2026-01-01T07:00:00Z') });
  expect(windowed).not.toBe(open);
  expect(open.next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-01T01:00:00Z'));
  expect(windowed.next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-01T05:00:00Z'));
  expect(windowed.next(at('2026-01-01T07:00:00Z'))).toBeUndefined();
  // The same window again: the same compiled schedule; another window: another one.
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: 0, startAt: at('2026-01-01T05:00:00Z'), endAt: at('2026-01-01T07:00:00Z') })).toBe(windowed);
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: 0, endAt: at('2026-01-01T07:00:00Z') }).next(at('2026-01-01T00:00:00Z'))).toBe(at('2026-01-01T01:00:00Z'));
  expect(cache.of({ schedule, timezone: 'UTC', createdAt: 0 })).toBe(open);
});

/**
 * `every` and `at` schedules, compileSchedule's validation, and that latest() does not
 * enumerate missed ticks (counted in calls, not timed: its speed is the `cron-maths`
 * benchmark's `latest` figures).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { CronCalendar } from '../../src/schedule/calendar.js';
import { compileSchedule } from '../../src/schedule/index.js';
import { at, cron, iso } from './helpers.js';

describe('every', () => {
  const every = (everyMs: number, anchor?: number, defaultAnchor = 0) =>
    compileSchedule(anchor === undefined ? { kind: 'every', everyMs } : { kind: 'every', everyMs, anchor }, 'UTC', defaultAnchor);

  it('ticks at anchor + k * every, for negative k too', () => {
    const schedule = every(60_000, 30_000);
    expect(schedule.next(0)).toBe(30_000);
    expect(schedule.next(30_000)).toBe(90_000);
    expect(schedule.next(29_999)).toBe(30_000);
    expect(schedule.latest(30_000)).toBe(30_000);
    expect(schedule.latest(29_999)).toBe(-30_000);
    expect(schedule.next(-100_000)).toBe(-90_000);
    expect(schedule.latest(-90_001)).toBe(-150_000);
  });

  it('uses the default anchor when the spec has none, and ignores the time zone', () => {
    const anchor = at('2026-03-08T06:59:30Z');
    const schedule = compileSchedule({ kind: 'every', everyMs: 3_600_000 }, 'America/New_York', anchor);
    expect(iso(schedule.next(at('2026-03-08T07:00Z')))).toBe('2026-03-08T07:59:30Z');
    expect(iso(schedule.latest(at('2026-03-08T07:00Z')))).toBe('2026-03-08T06:59:30Z');
  });

  it('finds the latest tick after 30 million missed intervals exactly', () => {
    const schedule = every(60_000, 0);
    const now = 30_000_000 * 60_000 + 12_345;
    expect(schedule.latest(now)).toBe(30_000_000 * 60_000);
    expect(schedule.next(now)).toBe(30_000_001 * 60_000);
    expect(schedule.latest(now + 47_655)).toBe(30_000_001 * 60_000);
  });

  it('stays exact for large instants and odd periods', () => {
    const schedule = every(7_919, 1_700_000_000_123);
    for (const t of [0, 1_700_000_000_123, 4_102_444_800_000, -2_208_988_800_000, 8.64e15 - 10_000]) {
      const latest = schedule.latest(t)!;
      const next = schedule.next(t)!;
      expect(latest).toBeLessThanOrEqual(t);
      expect(next).toBeGreaterThan(t);
      expect(next - latest).toBe(7_919);
      expect(Math.abs((latest - 1_700_000_000_123) % 7_919)).toBe(0);
    }
  });

  it('rejects a period that is not positive and finite', () => {
    for (const everyMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => compileSchedule({ kind: 'every', everyMs }, 'UTC', 0)).toThrow(ValidationError);
    }
    expect(() => compileSchedule({ kind: 'every', everyMs: 1000, anchor: Number.NaN }, 'UTC', 0)).toThrow(
      /schedule\.anchor/,
    );
  });
});

describe('at', () => {
  const once = compileSchedule({ kind: 'at', at: at('2026-05-01T12:00Z') }, 'UTC', 0);

  it('has exactly one tick', () => {
    expect(iso(once.next(at('2026-05-01T11:59:59.999Z')))).toBe('2026-05-01T12:00:00Z');
    expect(once.next(at('2026-05-01T12:00Z'))).toBeUndefined();
    expect(once.latest(at('2026-05-01T11:59:59.999Z'))).toBeUndefined();
    expect(iso(once.latest(at('2026-05-01T12:00Z')))).toBe('2026-05-01T12:00:00Z');
    expect(iso(once.latest(at('2099-01-01T00:00Z')))).toBe('2026-05-01T12:00:00Z');
  });

  it('rejects an instant that is not finite', () => {
    expect(() => compileSchedule({ kind: 'at', at: Number.NaN }, 'UTC', 0)).toThrow(ValidationError);
  });
});

describe('cron latest() does not enumerate', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('walks time-zone segments, not ticks, however long ago the previous tick was', () => {
    const cases = [
      cron('* * * * *', 'America/New_York'),
      cron('*/5 * * * * *', 'Europe/Berlin'),
      cron('0 9 * * 1-5', 'America/New_York'),
      cron('0 0 29 2 *', 'Australia/Lord_Howe'),
    ];
    const now = at('2026-03-08T12:00:00Z');
    const prev = vi.spyOn(CronCalendar.prototype, 'prev');
    const calls = cases.map((schedule) => {
      prev.mockClear();
      schedule.latest(now);
      return prev.mock.calls.length;
    });
    // At most two calendar steps per time-zone segment walked back (one for its regular
    // times, one for those a daylight-saving gap skipped): the weekday job walks back from
    // Sunday across New York's switch that morning (2 segments), the leap-day job across
    // four of Lord Howe's switches since 2024-02-29 (5 segments). Enumerating would take one
    // step per tick or per day missed.
    expect(calls[0]).toBeLessThanOrEqual(2);
    expect(calls[1]).toBeLessThanOrEqual(2);
    expect(calls[2]).toBeLessThanOrEqual(2 * 2);
    expect(calls[3]).toBeLessThanOrEqual(2 * 5);
    expect(iso(cases[3]!.latest(now))).toBe('2024-02-28T13:00:00Z'); // 2024-02-29 00:00 +11
  });

  it('handles instants at and beyond the ends of the Date range', () => {
    const schedule = cron('0 0 1 1 *', 'America/New_York');
    expect(schedule.next(Number.NaN)).toBeUndefined();
    expect(schedule.latest(Number.NaN)).toBeUndefined();
    expect(schedule.next(8.64e15)).toBeUndefined();
    expect(schedule.latest(-8.64e15)).toBeUndefined();
    expect(iso(schedule.next(Number.NEGATIVE_INFINITY))).toMatch(/^-?\d/);
    expect(schedule.latest(Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(8.64e15);
  });
});

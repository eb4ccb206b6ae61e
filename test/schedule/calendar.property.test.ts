/**
 * Properties of the full cron syntax (seconds, names, L, W, #) where the zone-aware
 * oracle does not reach:
 *  - in UTC (no daylight saving), next() and latest() match cron-parser's own
 *    iteration, which is sound there, for every generated expression it accepts;
 *  - nW and LW match a brute-force "closest weekday within the month";
 *  - in any zone and any year 1900-2200, next() and latest() describe one tick set.
 */
import { CronExpressionParser } from 'cron-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchedule, cronProblem } from '../../src/schedule/index.js';

const item = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }).map(String),
    fc
      .tuple(fc.integer({ min, max }), fc.integer({ min, max }))
      .map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.integer({ min: 1, max: Math.max(1, Math.floor((max - min) / 2)) }).map((step) => `*/${step}`),
    fc
      .tuple(fc.integer({ min, max }), fc.integer({ min: 1, max: 10 }))
      .map(([a, step]) => `${a}-${max}/${step}`),
  );
const list = (min: number, max: number) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant('*') },
    { weight: 4, arbitrary: fc.array(item(min, max), { minLength: 1, maxLength: 3 }).map((items) => items.join(',')) },
  );

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const dayOfMonth = fc.oneof(
  { weight: 4, arbitrary: list(1, 31) },
  { weight: 1, arbitrary: fc.constant('L') },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 28 }).map((d) => `${d},L`) },
  { weight: 1, arbitrary: fc.constant('?') },
);
const month = fc.oneof(
  { weight: 4, arbitrary: list(1, 12) },
  { weight: 1, arbitrary: fc.subarray(MONTHS, { minLength: 1, maxLength: 3 }).map((names) => names.join(',')) },
);
const dayOfWeek = fc.oneof(
  { weight: 4, arbitrary: list(0, 7) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 5 })).map(([d, n]) => `${d}#${n}`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 7 }).map((d) => `${d}L`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...DAYS), fc.constantFrom(...DAYS)).map(([a, b]) => `${a},${b}`) },
);
const expression6 = fc
  .tuple(list(0, 59), list(0, 59), list(0, 23), dayOfMonth, month, dayOfWeek)
  .map((fields) => fields.join(' '));

const instant = fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) });

describe('full syntax in UTC matches cron-parser', () => {
  it('next() and latest() walk the same ticks as cron-parser next() and prev()', () => {
    let compared = 0;
    fc.assert(
      fc.property(expression6, instant, (expression, start) => {
        let reference;
        try {
          reference = CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: new Date(start) });
        } catch {
          return; // cron-parser rejects it (e.g. overlapping lists, which we accept)
        }
        fc.pre(cronProblem(expression) === undefined);
        const schedule = compileSchedule({ kind: 'cron', expression }, 'UTC', 0);
        let ours = start;
        let forward: number[];
        try {
          forward = reference.take(4).map((d) => d.getTime());
          reference.reset(new Date(start));
        } catch {
          return;
        }
        for (const expected of forward) {
          ours = schedule.next(ours)!;
          expect(ours, `${expression} after ${new Date(start).toISOString()}`).toBe(expected);
        }
        // cron-parser's prev() is strictly before its current date; latest(t) is <= t.
        let back = start - 1;
        for (const expected of reference.take(-4).map((d) => d.getTime())) {
          back = schedule.latest(back)!;
          expect(back, `${expression} before ${new Date(start).toISOString()}`).toBe(expected);
          back -= 1;
        }
        compared++;
      }),
      { numRuns: 1200, seed: 4242 },
    );
    expect(compared).toBeGreaterThan(250);
  });
});

describe('W', () => {
  /** Days (1-31) of `year`-`month` (1-12) that are the closest weekday to `target` within the month. */
  function closestWeekday(year: number, month: number, target: number | 'L'): number | undefined {
    const length = new Date(Date.UTC(year, month, 0)).getUTCDate();
    const weekdays = [];
    for (let d = 1; d <= length; d++) {
      const day = new Date(Date.UTC(year, month - 1, d)).getUTCDay();
      if (day !== 0 && day !== 6) weekdays.push(d);
    }
    if (target === 'L') return weekdays.at(-1);
    if (target > length) return undefined;
    return weekdays.reduce((best, d) => (Math.abs(d - target) < Math.abs(best - target) ? d : best));
  }

  it('nW and LW fire on the closest weekday within the month', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1970, max: 2100 }),
        fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constant('L' as const)),
        (year, target) => {
          const schedule = compileSchedule({ kind: 'cron', expression: `0 12 ${target}W * *` }, 'UTC', 0);
          let t = Date.UTC(year, 0, 1) - 1;
          const found: string[] = [];
          for (let next = schedule.next(t); next !== undefined && next < Date.UTC(year + 1, 0, 1); next = schedule.next(next)) {
            found.push(new Date(next).toISOString().slice(0, 10));
            t = next;
          }
          const expected: string[] = [];
          for (let m = 1; m <= 12; m++) {
            const day = closestWeekday(year, m, target);
            if (day !== undefined) expected.push(new Date(Date.UTC(year, m - 1, day)).toISOString().slice(0, 10));
          }
          expect(found, `${target}W in ${year}`).toEqual(expected);
        },
      ),
      { numRuns: 150, seed: 77 },
    );
  });
});

describe('one tick set in every zone', () => {
  const zones = [
    'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'Pacific/Chatham', 'Europe/Dublin',
    'Pacific/Apia', 'Antarctica/Troll', 'Africa/Casablanca', 'America/Havana', 'Asia/Tehran', 'UTC',
  ];

  it('latest(t) <= t < next(t), with no tick between them, for 1900-2200', () => {
    fc.assert(
      fc.property(
        expression6,
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2200, 0, 1) }),
        (expression, zone, t) => {
          fc.pre(cronProblem(expression) === undefined);
          const schedule = compileSchedule({ kind: 'cron', expression }, zone, 0);
          const next = schedule.next(t);
          const latest = schedule.latest(t);
          const where = `${zone} "${expression}" at ${new Date(t).toISOString()}`;
          expect(next, where).toBeDefined();
          expect(latest, where).toBeDefined();
          expect(latest! <= t && t < next!, where).toBe(true);
          expect(schedule.latest(next!), where).toBe(next);
          expect(schedule.next(latest!), where).toBe(next);
          expect(schedule.latest(next! - 1), where).toBe(latest);
        },
      ),
      { numRuns: 500, seed: 99 },
    );
  });
});

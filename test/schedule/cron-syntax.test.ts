/** Cron syntax and validation, in UTC unless a case is about zones. Expected dates worked out by hand. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { compileSchedule, cronProblem, isValidTimeZone } from '../../src/schedule/index.js';
import { at, cron, expectTicks, forward, iso } from './helpers.js';

describe('fields', () => {
  it('5 fields fire on the minute; 6 fields add a leading seconds field', () => {
    expect(iso(cron('* * * * *').next(at('2026-01-01T00:00:00.500Z')))).toBe('2026-01-01T00:01:00Z');
    expectTicks(cron('*/15 * * * * *'), '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', [
      '2026-01-01T00:00:15Z',
      '2026-01-01T00:00:30Z',
      '2026-01-01T00:00:45Z',
      '2026-01-01T00:01:00Z',
    ]);
    expect(iso(cron('30 0 0 1 1 *').next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:00:30Z');
    expect(iso(cron('30 30 2 * * *', 'America/New_York').next(at('2026-03-08T05:00Z')))).toBe('2026-03-08T07:30:30Z');
  });

  it('ranges, steps, lists, and month and weekday names', () => {
    expectTicks(cron('5-10/5,50 8-9 * * *'), '2026-01-01T00:00Z', '2026-01-01T23:59Z', [
      '2026-01-01T08:05:00Z',
      '2026-01-01T08:10:00Z',
      '2026-01-01T08:50:00Z',
      '2026-01-01T09:05:00Z',
      '2026-01-01T09:10:00Z',
      '2026-01-01T09:50:00Z',
    ]);
    expect(forward(cron('0 0 1 JAN,mar *'), '2026-01-01T00:00Z', '2027-01-01T00:00Z')).toEqual([
      '2026-03-01T00:00:00Z',
      '2027-01-01T00:00:00Z',
    ]);
    // 2026-03-02 is a Monday.
    expect(forward(cron('0 12 * * MON-fri'), '2026-03-01T00:00Z', '2026-03-08T00:00Z')).toHaveLength(5);
    expect(forward(cron('0 12 * * mon-sun'), '2026-03-01T00:00Z', '2026-03-08T00:00Z')).toHaveLength(7);
    expect(forward(cron('0 12 * * 0,7'), '2026-03-01T00:00Z', '2026-03-15T00:00Z')).toEqual([
      '2026-03-01T12:00:00Z',
      '2026-03-08T12:00:00Z',
    ]);
    // Overlapping list items are fine, as in classic cron.
    expect(forward(cron('1-5,3 0 1 1 *'), '2026-01-01T00:00Z', '2026-01-01T01:00Z')).toHaveLength(5);
  });

  it('macros', () => {
    const from = '2026-03-01T00:00Z'; // a Sunday
    expect(iso(cron('@yearly').next(at(from)))).toBe('2027-01-01T00:00:00Z');
    expect(iso(cron('@annually').next(at(from)))).toBe('2027-01-01T00:00:00Z');
    expect(iso(cron('@monthly').next(at(from)))).toBe('2026-04-01T00:00:00Z');
    expect(iso(cron('@weekly').next(at(from)))).toBe('2026-03-08T00:00:00Z');
    expect(iso(cron('@daily').next(at(from)))).toBe('2026-03-02T00:00:00Z');
    expect(iso(cron('@midnight').next(at(from)))).toBe('2026-03-02T00:00:00Z');
    expect(iso(cron('@hourly').next(at(from)))).toBe('2026-03-01T01:00:00Z');
    // @hourly has hour `*`: it follows elapsed time through a fold.
    expect(forward(cron('@hourly', 'America/New_York'), '2026-11-01T04:30Z', '2026-11-01T06:30Z')).toEqual([
      '2026-11-01T05:00:00Z',
      '2026-11-01T06:00:00Z',
    ]);
  });
});

describe('L, W and #', () => {
  it('L: the last day of the month, leap years included', () => {
    expect(forward(cron('0 0 L 2 *'), '2026-01-01T00:00Z', '2029-01-01T00:00Z')).toEqual([
      '2026-02-28T00:00:00Z',
      '2027-02-28T00:00:00Z',
      '2028-02-29T00:00:00Z',
    ]);
  });

  it('nW: the nearest weekday within the month', () => {
    // 2026-08-15 is a Saturday -> Friday 14th; 2026-11-15 a Sunday -> Monday 16th.
    expect(iso(cron('0 0 15W * *').next(at('2026-08-01T00:00Z')))).toBe('2026-08-14T00:00:00Z');
    expect(iso(cron('0 0 15W * *').next(at('2026-11-01T00:00Z')))).toBe('2026-11-16T00:00:00Z');
    // 2026-08-01 is a Saturday: 1W does not go back into July, it takes Monday the 3rd.
    expect(iso(cron('0 0 1W * *').next(at('2026-07-31T00:00Z')))).toBe('2026-08-03T00:00:00Z');
    // 2026-05-31 is a Sunday: 31W takes Friday the 29th, not June 1st.
    expect(iso(cron('0 0 31W * *').next(at('2026-05-01T00:00Z')))).toBe('2026-05-29T00:00:00Z');
    // A month without the day has no nW tick: 31W skips June 2026.
    expect(iso(cron('0 0 31W * *').next(at('2026-06-01T00:00Z')))).toBe('2026-07-31T00:00:00Z');
  });

  it('LW: the last weekday of the month', () => {
    expect(iso(cron('0 0 LW * *').next(at('2026-05-01T00:00Z')))).toBe('2026-05-29T00:00:00Z');
    expect(iso(cron('0 0 LW * *').latest(at('2026-05-29T00:00Z')))).toBe('2026-05-29T00:00:00Z');
  });

  it('nL and n#k on day-of-week', () => {
    expect(iso(cron('0 0 * * 5L').next(at('2026-03-01T00:00Z')))).toBe('2026-03-27T00:00:00Z');
    expect(iso(cron('0 0 * * FRIL'.replace('FRIL', '5L')).latest(at('2026-03-26T00:00Z')))).toBe('2026-02-27T00:00:00Z');
    expect(iso(cron('0 0 * * 1#2').next(at('2026-03-01T00:00Z')))).toBe('2026-03-09T00:00:00Z');
    expect(iso(cron('0 0 * * MON#2').next(at('2026-03-01T00:00Z')))).toBe('2026-03-09T00:00:00Z');
    expect(iso(cron('0 0 * * 5#5').next(at('2026-01-01T00:00Z')))).toBe('2026-01-30T00:00:00Z');
  });
});

describe('day-of-month and day-of-week', () => {
  it('when both are restricted, a day matching either fires', () => {
    // January 2026: Fridays 2, 9, 16; the 13th is a Tuesday.
    expect(forward(cron('0 0 13 * 5'), '2026-01-01T00:00Z', '2026-01-17T00:00Z')).toEqual([
      '2026-01-02T00:00:00Z',
      '2026-01-09T00:00:00Z',
      '2026-01-13T00:00:00Z',
      '2026-01-16T00:00:00Z',
    ]);
  });

  it('when one is * (or ?), only the other one counts', () => {
    expect(forward(cron('0 0 13 * *'), '2026-01-01T00:00Z', '2026-03-01T00:00Z')).toEqual([
      '2026-01-13T00:00:00Z',
      '2026-02-13T00:00:00Z',
    ]);
    expect(forward(cron('0 0 ? * 5'), '2026-01-01T00:00Z', '2026-01-10T00:00Z')).toEqual([
      '2026-01-02T00:00:00Z',
      '2026-01-09T00:00:00Z',
    ]);
  });

  it('a step such as */10 restricts its field, so it combines with OR', () => {
    // Days 1, 11, 21, 31, or Mondays (5, 12, 19, 26 in January 2026).
    expect(forward(cron('0 0 */10 * 1'), '2025-12-31T12:00Z', '2026-01-31T12:00Z')).toEqual([
      '2026-01-01T00:00:00Z',
      '2026-01-05T00:00:00Z',
      '2026-01-11T00:00:00Z',
      '2026-01-12T00:00:00Z',
      '2026-01-19T00:00:00Z',
      '2026-01-21T00:00:00Z',
      '2026-01-26T00:00:00Z',
      '2026-01-31T00:00:00Z',
    ]);
  });

  it('rare but possible days are valid and found far ahead and behind', () => {
    expect(iso(cron('0 0 29 2 *').next(at('2097-03-01T00:00Z')))).toBe('2104-02-29T00:00:00Z');
    expect(iso(cron('0 0 29 2 *').latest(at('2104-02-28T00:00Z')))).toBe('2096-02-29T00:00:00Z');
    // The fifth Monday of February: only in a leap year whose February starts on a Monday.
    expect(iso(cron('0 0 * 2 1#5').next(at('2026-01-01T00:00Z')))).toBe('2044-02-29T00:00:00Z');
    // Day 31 of February never exists, but Mondays in February do.
    expect(cronProblem('0 0 31 2 1')).toBeUndefined();
  });
});

describe('invalid expressions', () => {
  it.each([
    ['0 0 30 2 *', 'never fires: day 30 of February'],
    ['0 0 31 4,6 *', 'never fires: day 31 of April, June'],
    ['0 0 30W 2 *', 'never fires: day 30W of February'],
    ['61 * * * *', 'minute field: 61 is out of range 0-59'],
    ['* 24 * * *', 'hour field: 24 is out of range 0-23'],
    ['0 0 32 * *', 'day-of-month field: 32 is out of range 1-31'],
    ['0 0 * 13 *', 'month field: 13 is out of range 1-12'],
    ['0 0 * * 8', 'day-of-week field: 8 is out of range 0-7'],
    ['61 * * * * *', 'second field: 61 is out of range 0-59'],
    ['5-1 * * * *', 'minute field: range 5-1 runs backwards'],
    ['*/0 * * * *', 'minute field: a step must be a positive number'],
    ['0 0 1,,2 * *', 'day-of-month field: empty list item'],
    ['0 0 * JANUARY *', 'month field: unknown name "JANUARY"'],
    ['0 0 * * funday', 'day-of-week field: unknown name "funday"'],
    ['0 0 * * 1#6', 'day-of-week field: the number after # must be 1-5'],
    ['0 0 * * 1#2,3', 'day-of-week field: # cannot be combined'],
    ['0 0 * * L', 'day-of-week field: L needs a weekday before it'],
    ['0 0 32W * *', 'day-of-month field: 32W is out of range 1-31'],
    ['H * * * *', 'minute field: hashed values (H) are not supported'],
    ['1.5 * * * *', 'minute field: invalid characters'],
    ['* * *', 'expected 5 fields'],
    ['0 0 1 * * * *', 'expected 5 fields'],
    ['', 'empty cron expression'],
    ['@fortnightly', 'unknown macro "@fortnightly"'],
  ])('%j: %s', (expression, message) => {
    expect(cronProblem(expression)).toContain(message);
    expect(() => compileSchedule({ kind: 'cron', expression }, 'UTC', 0)).toThrow(ValidationError);
  });

  it('compileSchedule reports the field, the value and a stable code', () => {
    try {
      compileSchedule({ kind: 'cron', expression: '0 0 30 2 *' }, 'UTC', 0);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      const validation = error as ValidationError;
      expect(validation.code).toBe('VALIDATION');
      expect(validation.issues).toEqual([
        { path: 'schedule', message: 'bad cron expression: never fires: day 30 of February', value: '0 0 30 2 *' },
      ]);
      expect(validation.message).toContain('"0 0 30 2 *"');
    }
  });
});

describe('time zones', () => {
  it('isValidTimeZone knows IANA names and rejects others', () => {
    for (const zone of ['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Etc/GMT+5', 'Asia/Kolkata']) {
      expect(isValidTimeZone(zone), zone).toBe(true);
    }
    for (const zone of ['', 'Mars/Olympus', 'America/NewYork', ' UTC', 'EST5EDT ']) {
      expect(isValidTimeZone(zone), zone).toBe(false);
    }
  });

  it('a bad zone is rejected by cronProblem and compileSchedule', () => {
    expect(cronProblem('0 0 * * *', 'Mars/Olympus')).toBe('unknown time zone "Mars/Olympus"');
    expect(cronProblem('0 0 * * *', 'Europe/Paris')).toBeUndefined();
    expect(() => compileSchedule({ kind: 'cron', expression: '0 0 * * *' }, 'Mars/Olympus', 0)).toThrow(
      /timezone: unknown IANA time zone \(got "Mars\/Olympus"\)/,
    );
  });
});

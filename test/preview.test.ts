/**
 * Schedule preview (`nextTicks`, `latestTick`, `previewTicks`): validated like
 * `register()`, and the same ticks the scheduler fires, checked against a scheduler on
 * the fake clock; the README's five readings, as written there.
 */
import { describe, expect, it } from 'vitest';
import { latestTick, nextTicks, previewTicks, ValidationError, type ScheduleInput } from '../src/index.js';
import { harness } from './helpers.js';

const isoOf = (dates: readonly Date[]): string[] => dates.map((date) => date.toISOString());

function validationIssue(run: () => unknown): { path: string; value: unknown; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const [issue] = (error as ValidationError).issues;
    return { path: issue!.path, value: issue!.value, message: (error as Error).message };
  }
  throw new Error('expected a ValidationError');
}

describe('nextTicks and latestTick', () => {
  it('give the ticks strictly after `after` (10 by default) and the latest at or before `at`', () => {
    const ticks = nextTicks('0 * * * *', { after: '2026-01-01T00:00:00Z' });
    expect(ticks).toHaveLength(10);
    expect(ticks[0]!.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(ticks[9]!.toISOString()).toBe('2026-01-01T10:00:00.000Z');
    expect(latestTick('0 * * * *', { at: '2026-01-01T10:00:00Z' })?.toISOString()).toBe('2026-01-01T10:00:00.000Z');
    expect(latestTick('0 * * * *', { at: Date.parse('2026-01-01T10:00:00Z') - 1 })?.toISOString()).toBe('2026-01-01T09:00:00.000Z');
  });

  it('cover every schedule kind: one-offs, anchored and unanchored intervals', () => {
    expect(isoOf(nextTicks({ at: '2026-05-01' }, { after: '2026-01-01', count: 3 }))).toEqual(['2026-05-01T00:00:00.000Z']);
    expect(nextTicks({ at: '2026-05-01' }, { after: '2026-05-01' })).toEqual([]);
    expect(latestTick({ at: '2026-05-01' }, { at: '2026-04-30T23:59:59Z' })).toBeUndefined();
    expect(isoOf(nextTicks({ every: '90s', anchor: '2026-01-01T00:00:10Z' }, { after: '2026-01-01T00:00:00Z', count: 2 }))).toEqual([
      '2026-01-01T00:00:10.000Z',
      '2026-01-01T00:01:40.000Z',
    ]);
    // Without an anchor: as a job created at `after`, to the second.
    expect(isoOf(nextTicks({ every: '90s' }, { after: '2026-01-01T00:00:00.500Z', count: 2 }))).toEqual([
      '2026-01-01T00:01:30.000Z',
      '2026-01-01T00:03:00.000Z',
    ]);
    expect(latestTick({ every: '1h', anchor: '2026-01-01T00:30:00Z' }, { at: '2026-01-01T05:00:00Z' })?.toISOString()).toBe('2026-01-01T04:30:00.000Z');
  });

  it('stop at the last tick a schedule has, and cap count at 10,000', () => {
    expect(nextTicks('0 0 1 1 *', { after: '+275760-01-01T00:00:00Z', count: 5 })).toEqual([]);
    expect(nextTicks('* * * * * *', { after: '2026-01-01T00:00:00Z', count: 10_000 })).toHaveLength(10_000);
  });

  it.each<[string, () => unknown, string, unknown]>([
    ['a bad cron field', () => nextTicks('61 * * * *'), 'schedule', '61 * * * *'],
    ['an expression that never fires', () => nextTicks('0 0 30 2 *'), 'schedule', '0 0 30 2 *'],
    ['an unknown zone', () => latestTick('0 * * * *', { timezone: 'Mars/Olympus' }), 'timezone', 'Mars/Olympus'],
    ['an interval under a second', () => nextTicks({ every: 500 }), 'schedule.every', 500],
    ['a bad anchor', () => nextTicks({ every: '1m', anchor: 'soon' }), 'schedule.anchor', 'soon'],
    ['no schedule at all', () => nextTicks(42 as unknown as ScheduleInput), 'schedule', 42],
    ['a count of 0', () => nextTicks('* * * * *', { count: 0 }), 'count', 0],
    ['a count above 10,000', () => nextTicks('* * * * *', { count: 10_001 }), 'count', 10_001],
    ['a fractional count', () => nextTicks('* * * * *', { count: 2.5 }), 'count', 2.5],
    ['an impossible after', () => nextTicks('* * * * *', { after: '2026-02-30' }), 'after', '2026-02-30'],
    ['an unreadable at', () => latestTick('* * * * *', { at: 'yesterday' }), 'at', 'yesterday'],
    ['options that are not an object', () => nextTicks('* * * * *', 'UTC' as never), 'options', 'UTC'],
  ])('refuse %s with a ValidationError naming the field and the value', (_case, run, path, value) => {
    const issue = validationIssue(run);
    expect(issue.path).toBe(path);
    expect(issue.value).toEqual(value);
  });

  it('refuse an unknown option, as register() does', () => {
    expect(validationIssue(() => nextTicks('* * * * *', { tz: 'UTC' } as never)).message).toMatch(/Unrecognized key: "tz"/);
    expect(validationIssue(() => nextTicks('* * * * *', { schedule: '* * * * *' } as never)).path).toBe('options.schedule');
  });

  it.each<[string, ScheduleInput, string]>([
    ['a cron in New York across both DST days', '30 1,2 * * *', 'America/New_York'],
    ['every 15 minutes on Lord Howe (30-minute shifts)', '*/15 * * * *', 'Australia/Lord_Howe'],
    ['a fifth Friday of February', '0 0 * 2 5#5', 'Europe/Berlin'],
    ['an interval', { every: '7h', anchor: '2026-01-01T00:00:00Z' }, 'UTC'],
  ])('agree with what a scheduler on the same schedule reports: %s', async (_case, schedule, timezone) => {
    const start = '2026-03-01T00:00:00Z';
    const { scheduler } = harness({ start });
    scheduler.register({ name: 'job', schedule, timezone, handler: () => undefined });
    await scheduler.start();
    try {
      const expected = await scheduler.nextRuns('job', 300);
      expect(isoOf(nextTicks(schedule, { timezone, after: start, count: 300 }))).toEqual(isoOf(expected));
      for (const tick of expected.slice(0, 50)) {
        expect(latestTick(schedule, { timezone, at: tick })?.getTime()).toBe(tick.getTime());
      }
    } finally {
      await scheduler.stop();
    }
  });
});

describe('previewTicks', () => {
  it('marks a tick shifted by a gap with the skipped wall-clock time', () => {
    expect(previewTicks('30 2 * * *', { timezone: 'America/New_York', after: '2026-03-07T12:00:00Z', count: 2 })).toEqual([
      { at: new Date('2026-03-08T07:30:00Z'), local: '2026-03-08T03:30:00', offset: '-04:00', shiftedFrom: '2026-03-08T02:30:00' },
      { at: new Date('2026-03-09T06:30:00Z'), local: '2026-03-09T02:30:00', offset: '-04:00' },
    ]);
  });

  it('marks both occurrences of a repeated hour, and gives the same ticks as nextTicks', () => {
    const options = { timezone: 'America/New_York', after: '2026-11-01T04:00:00Z', count: 4 };
    const previews = previewTicks('30 * * * *', options);
    expect(previews.map(({ at }) => at)).toEqual(nextTicks('30 * * * *', options));
    expect(previews.map(({ local, offset, repeated }) => [local, offset, repeated])).toEqual([
      ['2026-11-01T00:30:00', '-04:00', undefined],
      ['2026-11-01T01:30:00', '-04:00', 'first'],
      ['2026-11-01T01:30:00', '-05:00', 'second'],
      ['2026-11-01T02:30:00', '-05:00', undefined],
    ]);
  });

  it('shows offsets with seconds for a local mean time, and marks nothing in a fixed zone', () => {
    expect(previewTicks('0 12 * * *', { timezone: 'America/New_York', after: '1850-01-01T00:00:00Z', count: 1 })[0]!.offset).toBe('-04:56:02');
    expect(previewTicks('0 * * * *', { timezone: 'Etc/GMT-14', after: '2026-01-01T00:00:00Z', count: 1 })).toEqual([
      { at: new Date('2026-01-01T01:00:00Z'), local: '2026-01-01T15:00:00', offset: '+14:00' },
    ]);
  });
});

/** The README's "Preview" section, example by example. */
describe('the five readings of the README', () => {
  it('1. a step in day-of-month counts as restricted: */2 OR Monday', () => {
    expect(isoOf(nextTicks('0 0 */2 * 1', { after: '2026-06-01T00:00:00Z', count: 5 }))).toEqual([
      '2026-06-03T00:00:00.000Z',
      '2026-06-05T00:00:00.000Z',
      '2026-06-07T00:00:00.000Z',
      '2026-06-08T00:00:00.000Z', // a Monday
      '2026-06-09T00:00:00.000Z',
    ]);
  });

  it('2. a full-range hour (0-23) is a fixed hour on a fall-back day, * is not', () => {
    const options = { timezone: 'America/New_York', after: '2026-11-01T05:00:00Z', count: 2 };
    expect(previewTicks('30 0-23 * * *', options).map(({ local, repeated }) => [local, repeated])).toEqual([
      ['2026-11-01T01:30:00', 'first'],
      ['2026-11-01T02:30:00', undefined],
    ]);
    expect(previewTicks('30 * * * *', options).map(({ local, repeated }) => [local, repeated])).toEqual([
      ['2026-11-01T01:30:00', 'first'],
      ['2026-11-01T01:30:00', 'second'],
    ]);
  });

  it('3. following elapsed time on Lord Howe: 0 * * * * ticks 90 or 30 minutes apart', () => {
    const local = (after: string) =>
      previewTicks('0 * * * *', { timezone: 'Australia/Lord_Howe', after, count: 3 }).map(({ at, local: wall }) => `${at.toISOString()} ${wall}`);
    expect(local('2026-04-04T13:30:00Z')).toEqual([
      '2026-04-04T14:00:00.000Z 2026-04-05T01:00:00',
      '2026-04-04T15:30:00.000Z 2026-04-05T02:00:00', // 90 minutes later: 01:30-02:00 came twice
      '2026-04-04T16:30:00.000Z 2026-04-05T03:00:00',
    ]);
    expect(local('2026-10-03T14:00:00Z')).toEqual([
      '2026-10-03T14:30:00.000Z 2026-10-04T01:00:00',
      '2026-10-03T15:30:00.000Z 2026-10-04T02:30:00', // 02:00 was skipped: shifted by the 30-minute gap
      '2026-10-03T16:00:00.000Z 2026-10-04T03:00:00', // 30 minutes later
    ]);
  });

  it('4. a day the zone skips entirely fires shifted by the gap (Pacific/Apia, Friday 2011-12-30)', () => {
    expect(previewTicks('0 9 * * 5', { timezone: 'Pacific/Apia', after: '2011-12-20T00:00:00Z', count: 3 })).toEqual([
      { at: new Date('2011-12-23T19:00:00Z'), local: '2011-12-23T09:00:00', offset: '-10:00' },
      { at: new Date('2011-12-30T19:00:00Z'), local: '2011-12-31T09:00:00', offset: '+14:00', shiftedFrom: '2011-12-30T09:00:00' },
      { at: new Date('2012-01-05T19:00:00Z'), local: '2012-01-06T09:00:00', offset: '+14:00' },
    ]);
  });

  it('5. W, LW, nL and # follow Quartz: 31W skips short months, 1W on a Saturday fires Monday the 3rd', () => {
    const after = '2026-01-01T00:00:00Z';
    expect(isoOf(nextTicks('0 0 31W * *', { after, count: 3 }))).toEqual(['2026-01-30T00:00:00.000Z', '2026-03-31T00:00:00.000Z', '2026-05-29T00:00:00.000Z']);
    expect(isoOf(nextTicks('0 0 1W * *', { after: '2026-07-15T00:00:00Z', count: 1 }))).toEqual(['2026-08-03T00:00:00.000Z']);
    expect(isoOf(nextTicks('0 0 LW * *', { after, count: 2 }))).toEqual(['2026-01-30T00:00:00.000Z', '2026-02-27T00:00:00.000Z']);
    expect(isoOf(nextTicks('0 0 * * 5L', { after, count: 2 }))).toEqual(['2026-01-30T00:00:00.000Z', '2026-02-27T00:00:00.000Z']);
    expect(isoOf(nextTicks('0 0 * * 1#2', { after, count: 2 }))).toEqual(['2026-01-12T00:00:00.000Z', '2026-02-09T00:00:00.000Z']);
  });
});

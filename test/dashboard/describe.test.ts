/** The dashboard's schedule describer, its DST marks and its escaping: plain values, no I/O. */
import { describe, expect, it } from 'vitest';
import { compactDuration, describeCron, describeSchedule } from '../../src/dashboard/describe.js';
import { escapeHtml, html } from '../../src/dashboard/html.js';
import { TickReader } from '../../src/dashboard/ticks.js';
import type { JobRecord, ScheduleSpec } from '../../src/store.js';

describe('describeCron', () => {
  it.each([
    ['*/15 * * * *', 'every 15 minutes every day'],
    ['30 2 * * *', 'at 02:30 every day'],
    ['0 9 * * MON-FRI', 'at 09:00 on Monday to Friday'],
    ['0 9 * * 1-5', 'at 09:00 on Monday to Friday'],
    ['0 0 1,15 * *', 'at 00:00 on day 1 and day 15'],
    ['0 0 L * *', 'at 00:00 on the last day of the month'],
    ['0 0 LW * *', 'at 00:00 on the last weekday of the month'],
    ['0 0 15W * *', 'at 00:00 on the weekday nearest day 15'],
    ['0 0 * 2 5#5', 'at 00:00 on the fifth Friday of the month in February'],
    ['0 18 * * 5L', 'at 18:00 on the last Friday of the month'],
    ['0 0 13 * 5', 'at 00:00 on day 13 or on Friday'],
    ['0 * * * *', 'every hour, at minute 0 every day'],
    ['5 */2 * * *', 'at minute 5, every 2 hours every day'],
    ['0 9-17 * * *', 'at minute 0 past hour 9 to 17 every day'],
    ['*/10 * * * * *', 'every 10 seconds of every minute every day'],
    ['15 30 2 * * *', 'at 02:30:15 every day'],
    ['0 0 1 JAN,JUL *', 'at 00:00 on day 1 in January and July'],
    ['@daily', 'every day at 00:00'],
    ['@HOURLY', 'every hour, at minute 0'],
  ])('%s: %s', (expression, words) => {
    expect(describeCron(expression)).toBe(words);
  });

  it('describes intervals and one-offs', () => {
    expect(describeSchedule({ kind: 'every', everyMs: 3_600_000 })).toBe('every hour');
    expect(describeSchedule({ kind: 'every', everyMs: 90_000 })).toBe('every 1 minute 30 seconds');
    expect([3_600_000, 5_400_000, 90_000, 250, 86_400_000 + 1].map(compactDuration)).toEqual(['1h', '1h30m', '1m30s', '250ms', '1d1ms']);
    expect(describeSchedule({ kind: 'at', at: Date.UTC(2026, 5, 1) })).toBe('once, at 2026-06-01T00:00:00.000Z');
  });
});

function job(schedule: ScheduleSpec, timezone: string): JobRecord {
  return {
    name: 'j', schedule, timezone, concurrencyPolicy: 'Allow', history: { succeeded: 3, failed: 1 },
    suspended: false, createdAt: 0, cursor: 0, scheduledRuns: 0, succeeded: 0, failed: 0, skipped: 0, backfills: [],
  };
}

describe('next ticks with daylight-saving marks (previewTicks on the stored job)', () => {
  const reader = new TickReader();
  const marks = (ticks: ReturnType<TickReader['nextTicks']>) =>
    ticks.map((tick) => [tick.at.toISOString(), `${tick.local} ${tick.offset}`, tick.shiftedFrom ?? tick.repeated]);

  it('marks a tick shifted by a spring-forward gap', () => {
    expect(marks(reader.nextTicks(job({ kind: 'cron', expression: '30 2 * * *' }, 'America/New_York'), Date.UTC(2026, 2, 7, 12), 2))).toEqual([
      ['2026-03-08T07:30:00.000Z', '2026-03-08T03:30:00 -04:00', '2026-03-08T02:30:00'],
      ['2026-03-09T06:30:00.000Z', '2026-03-09T02:30:00 -04:00', undefined],
    ]);
    expect(reader.wallTime(Date.UTC(2026, 2, 8, 7, 30), 'America/New_York')).toBe('2026-03-08 03:30 -04:00');
  });

  it('marks both occurrences of a repeated hour (a schedule that follows elapsed time)', () => {
    expect(marks(reader.nextTicks(job({ kind: 'cron', expression: '30 * * * *' }, 'America/New_York'), Date.UTC(2026, 10, 1, 4, 15), 4))).toEqual([
      ['2026-11-01T04:30:00.000Z', '2026-11-01T00:30:00 -04:00', undefined],
      ['2026-11-01T05:30:00.000Z', '2026-11-01T01:30:00 -04:00', 'first'],
      ['2026-11-01T06:30:00.000Z', '2026-11-01T01:30:00 -05:00', 'second'],
      ['2026-11-01T07:30:00.000Z', '2026-11-01T02:30:00 -05:00', undefined],
    ]);
  });

  it('lists interval and one-off ticks from the stored anchor', () => {
    const every = { ...job({ kind: 'every', everyMs: 3_600_000 }, 'UTC'), createdAt: Date.UTC(2026, 0, 1, 0, 20) };
    expect(reader.nextTicks(every, Date.UTC(2026, 0, 1, 3), 2).map((tick) => tick.at.toISOString())).toEqual(['2026-01-01T03:20:00.000Z', '2026-01-01T04:20:00.000Z']);
    expect(reader.nextTicks(job({ kind: 'at', at: Date.UTC(2026, 5, 1) }, 'UTC'), Date.UTC(2026, 0, 1), 10)).toHaveLength(1);
  });

  it("keeps to the job's window and the runs its maxRuns leaves", () => {
    const hourly = job({ kind: 'cron', expression: '0 * * * *' }, 'UTC');
    const at = (ticks: ReturnType<TickReader['nextTicks']>) => ticks.map((tick) => tick.at.toISOString());
    const windowed = { ...hourly, startAt: Date.UTC(2026, 0, 1, 5), endAt: Date.UTC(2026, 0, 1, 7) };
    expect(at(reader.nextTicks(windowed, Date.UTC(2026, 0, 1), 10))).toEqual(['2026-01-01T05:00:00.000Z', '2026-01-01T06:00:00.000Z', '2026-01-01T07:00:00.000Z']);
    const limited = { ...hourly, cursor: Date.UTC(2026, 0, 1, 3), maxRuns: 5, scheduledRuns: 3 };
    expect(at(reader.nextTicks(limited, Date.UTC(2026, 0, 1, 2, 30), 10))).toEqual(['2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    expect(reader.nextTicks({ ...limited, scheduledRuns: 5 }, Date.UTC(2026, 0, 1, 2, 30), 10)).toEqual([]);
  });
});

describe('html', () => {
  it('escapes every interpolated value and keeps markup built by the tag', () => {
    const name = `<img src=x onerror=alert(1)> & "quotes" 'too'`;
    expect(escapeHtml(name)).toBe('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot; &#39;too&#39;');
    expect(html`<a title="${name}">${[name, html`<b>${name}</b>`, undefined, false]}</a>`.text).toBe(
      `<a title="${escapeHtml(name)}">${escapeHtml(name)}<b>${escapeHtml(name)}</b></a>`,
    );
  });
});

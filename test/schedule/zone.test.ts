/**
 * Zone offsets (zone.ts): a fixed-offset zone is one segment read from Intl once; any
 * other zone scans each year with a sample every few days; both paths give the same ticks.
 * Intl calls are counted by spying on `Intl.DateTimeFormat.prototype.format`.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { compileSchedule } from '../../src/schedule/index.js';
import { CHUNK, SCAN_STEP, Zone } from '../../src/schedule/zone.js';
import { parseCron } from '../../src/schedule/cron.js';
import { CronSchedule } from '../../src/schedule/cron-schedule.js';
import { at, cron, expectTicks, forward, iso } from './helpers.js';
import { transitionsIn, WallReader } from './oracle.js';

/** The number of `Intl.DateTimeFormat` format() calls `run` makes. */
function intlCalls(run: () => void): number {
  // A getter returning a bound function, per ECMA-402, though lib.d.ts declares a method.
  const prototype = Intl.DateTimeFormat.prototype as unknown as { readonly format: unknown };
  const spy = vi.spyOn(prototype, 'format', 'get');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

const second = (isoText: string): number => at(isoText) / 1000;

describe('fixed-offset zones', () => {
  it.each([
    ['UTC', 0],
    ['Etc/UTC', 0],
    ['GMT', 0],
    ['Etc/GMT+5', -5 * 3600],
    ['Etc/GMT-14', 14 * 3600],
  ])('%s is one segment forever, read from Intl once', (name, offset) => {
    const zone = new Zone(name);
    const calls = intlCalls(() => {
      for (const year of [-271_000, 100, 1970, 2031, 2032, 9_999, 275_000]) zone.segmentAt(Date.UTC(year, 5, 1) / 1000);
    });
    expect(calls).toBe(1);
    expect(zone.segmentAt(second('2031-01-01T00:00Z'))).toEqual({ start: -Infinity, end: Infinity, offset, before: offset });
  });

  it('a first next() in an untouched year reads Intl at most once', () => {
    const calls = intlCalls(() => {
      for (const year of [2031, 2032, 2077]) cron('*/5 * * * *', 'Etc/GMT+5').next(Date.UTC(year, 5, 15));
    });
    expect(calls).toBeLessThanOrEqual(1);
  });

  it('keeps the ends of the Date range', () => {
    const yearly = cron('0 0 1 1 *', 'UTC');
    expect(yearly.next(Number.NEGATIVE_INFINITY)).toBe(Date.UTC(-271_820, 0, 1));
    expect(yearly.latest(Number.POSITIVE_INFINITY)).toBe(Date.UTC(275_760, 0, 1));
    expect(yearly.next(8.64e15)).toBeUndefined();
    expect(yearly.latest(-8.64e15)).toBeUndefined();
    const minutely = cron('* * * * *', 'Etc/GMT-14');
    expect(minutely.latest(-8.64e15)).toBe(-8.64e15);
    expect(minutely.next(8.64e15 - 1)).toBe(8.64e15);
  });
});

describe('chunk scans', () => {
  it('read a chunk (32 days) with ~14 Intl calls, plus ~19 per transition (a year took ~125, a daily scan ~370)', () => {
    let zone = new Zone('Asia/Kolkata');
    const chunkStart = Math.floor(second('2031-06-15T00:00Z') / CHUNK) * CHUNK;
    const constant = intlCalls(() => zone.segmentAt(second('2031-06-15T00:00Z')));
    expect(constant).toBe(14);
    expect(zone.segmentAt(second('2031-06-15T00:00Z'))).toEqual({ start: chunkStart, end: chunkStart + CHUNK, offset: 19_800, before: 19_800 });

    zone = new Zone('America/New_York');
    const withDst = intlCalls(() => zone.segmentAt(second('2031-03-09T07:00Z')));
    expect(withDst).toBeGreaterThan(14);
    expect(withDst).toBeLessThan(14 + 2 * 19);
    // A year of segments, joined where a chunk boundary (no transition) separates two.
    const segments: { start: number; end: number; offset: number; before: number }[] = [];
    let calls = 0;
    for (let t = second('2031-01-01T00:00Z'); t < second('2032-01-01T00:00Z'); ) {
      let segment!: ReturnType<Zone['segmentAt']>;
      calls += intlCalls(() => (segment = zone.segmentAt(t)));
      const previous = segments.at(-1);
      if (previous !== undefined && segment.before === segment.offset && previous.offset === segment.offset) {
        previous.end = segment.end;
      } else {
        segments.push({ ...segment });
      }
      t = segment.end;
    }
    expect(calls).toBeLessThan(200);
    expect(segments.map(({ start, end, offset, before }) => [start, end, offset, before])).toEqual([
      [Math.floor(second('2031-01-01T00:00Z') / CHUNK) * CHUNK, second('2031-03-09T07:00Z'), -18_000, -18_000],
      [second('2031-03-09T07:00Z'), second('2031-11-02T06:00Z'), -14_400, -18_000],
      [second('2031-11-02T06:00Z'), Math.ceil(second('2032-01-01T00:00Z') / CHUNK) * CHUNK, -18_000, -14_400],
    ]);
  });

  // Chunks of an hour put boundaries inside every gap and fold: the ticks must not change.
  it.each([
    ['Pacific/Apia', '2011-12-28T00:00Z', '2012-01-02T00:00Z'], // skipped 2011-12-30, a whole day
    ['Pacific/Kiritimati', '1994-12-29T00:00Z', '1995-01-02T00:00Z'], // skipped 1994-12-31
    ['Australia/Lord_Howe', '2026-04-04T00:00Z', '2026-04-06T00:00Z'], // a 30-minute fold
    ['Australia/Lord_Howe', '2026-10-03T00:00Z', '2026-10-05T00:00Z'], // a 30-minute gap
    ['America/New_York', '2026-03-07T00:00Z', '2026-03-10T00:00Z'],
    ['America/New_York', '2026-10-31T00:00Z', '2026-11-03T00:00Z'],
    ['Antarctica/Troll', '2026-03-28T00:00Z', '2026-03-31T00:00Z'], // a 2-hour gap
  ])('%s: chunk boundaries inside gaps and folds change no tick (%s to %s)', (name, from, to) => {
    const hourly = new Zone(name, 3600);
    const monthly = new Zone(name);
    // A skipped day's wall-clock times fire as the next day's would: only a day-specific expression tells.
    const expressions = ['* * * * *', '*/20 * * * *', '0 * * * *', '30 2 * * *', '0 0-23 * * *', '45 23 * * *', '*/13 * * * * *', '0 12 30 12 *', '0 12 31 12 *'];
    for (const expression of expressions) {
      const parsed = parseCron(expression);
      if (!('cron' in parsed)) throw new Error(parsed.problem);
      const expected = forward(new CronSchedule(parsed.cron, monthly), from, to);
      expectTicks(new CronSchedule(parsed.cron, hourly), from, to, expected);
    }
  });

  // The zones with the shortest stretches between two transitions that return to the same
  // offset (about a week), which a scan with samples further apart can miss: a tripwire for
  // tzdata releases that bring shorter ones (Palestine and Morocco follow Ramadan).
  it.each(['Asia/Gaza', 'Africa/Casablanca', 'America/Noronha', 'Africa/Tunis'])(
    'find every transition a 12-hour scan finds in %s, 1940-2100, where no stretch is shorter than 2 steps',
    (name) => {
      const reader = new WallReader(name);
      const zone = new Zone(name);
      const expected: number[] = [];
      const found: number[] = [];
      for (let year = 1940; year <= 2100; year++) {
        expected.push(...transitionsIn(reader, year));
        const end = Date.UTC(year + 1, 0, 1) / 1000;
        for (let t = Date.UTC(year, 0, 1) / 1000; t < end; ) {
          const segment = zone.segmentAt(t);
          if (segment.offset !== segment.before && !found.includes(segment.start)) found.push(segment.start);
          t = segment.end;
        }
      }
      const unique = [...new Set(expected)].sort((a, b) => a - b);
      expect(found).toEqual(unique);
      let shortest = Infinity;
      unique.forEach((from, i) => {
        const back = unique.slice(i + 1).find((to) => reader.offsetAt(to) === reader.offsetAt(from - 1));
        if (back !== undefined) shortest = Math.min(shortest, back - from);
      });
      expect(shortest).toBeGreaterThanOrEqual(2 * SCAN_STEP);
    },
  );

  it('read a wall clock in the year 99 as 99, not 1999 (west of Greenwich, 0100-01-01Z is still in 99)', () => {
    const zone = new Zone('America/New_York');
    const yearOne = second('2001-01-01T00:00Z') - 5 * 146_097 * 86_400; // five 400-year cycles back: 0001-01-01Z
    // Local mean time before 1883: -4:56:02.
    expect(zone.segmentAt(yearOne).offset).toBe(-17_762);
    expect(zone.segmentAt(second('0100-01-01T00:00Z'))).toMatchObject({ offset: -17_762, before: -17_762 });
  });
});

/**
 * Each fixed-offset zone against a scanned zone that has kept the same offset since
 * `since`: their ticks must be identical.
 */
const TWINS = [
  { fixed: 'UTC', scanned: 'Africa/Abidjan', since: 1913 },
  { fixed: 'Etc/GMT+5', scanned: 'America/Panama', since: 1909 },
  { fixed: 'Etc/GMT-14', scanned: 'Pacific/Kiritimati', since: 1996 },
] as const;

const EXPRESSIONS = [
  '* * * * *',
  '*/7 * * * *',
  '0 9 * * 1-5',
  '30 2 * * *',
  '0 0 29 2 *',
  '0 0 1 1 *',
  '15 10 L * *',
  '*/13 * * * * *',
  '0 0 0 15W * *',
  '0 30 23 * * 5L',
  '0 0 12 * * 1#3',
];

describe('fixed-offset and scanned zones give the same ticks', () => {
  it.each(TWINS)('$fixed and $scanned', ({ fixed, scanned, since }) => {
    // Ten years on, so that latest() of the sparsest expression (29 February) stays after `since`.
    const from = Date.UTC(since + 10, 0, 1);
    const far = [Date.UTC(100_000, 3, 1), Date.UTC(275_000, 0, 1), 8.64e15 - 86_400_000, 8.64e15 - 1];
    fc.assert(
      fc.property(
        fc.constantFrom(...EXPRESSIONS),
        fc.oneof(fc.integer({ min: from, max: Date.UTC(2400, 0, 1) }), fc.constantFrom(...far)),
        (expression, t) => {
          const a = compileSchedule({ kind: 'cron', expression }, fixed, 0);
          const b = compileSchedule({ kind: 'cron', expression }, scanned, 0);
          let next = a.next(t);
          expect(b.next(t), `${expression} next(${iso(t)})`).toBe(next);
          expect(b.latest(t), `${expression} latest(${iso(t)})`).toBe(a.latest(t));
          for (let i = 0; i < 3 && next !== undefined; i++) {
            const following = a.next(next);
            expect(b.next(next)).toBe(following);
            expect(b.latest(next - 1)).toBe(a.latest(next - 1));
            next = following;
          }
        },
      ),
      { numRuns: 300, seed: 20_310_615 },
    );
  });
});

/**
 * Zone offsets (zone.ts): a fixed-offset zone is one segment read from Intl once; any
 * other zone scans each year with a sample every few days; both paths give the same ticks.
 * Intl calls are counted by spying on `Intl.DateTimeFormat.prototype.format`.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { compileSchedule } from '../../src/schedule/index.js';
import { SCAN_STEP, Zone } from '../../src/schedule/zone.js';
import { at, cron, iso } from './helpers.js';
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

describe('year scans', () => {
  it('find the transitions with a fraction of a daily scan (which took ~370 calls a year, ~400 with DST)', () => {
    let zone = new Zone('Asia/Kolkata');
    const constant = intlCalls(() => zone.segmentAt(second('2031-06-15T00:00Z')));
    expect(constant).toBeLessThan(150);
    expect(zone.segmentAt(second('2031-06-15T00:00Z'))).toEqual({
      start: second('2031-01-01T00:00Z'),
      end: second('2032-01-01T00:00Z'),
      offset: 19_800,
      before: 19_800,
    });

    zone = new Zone('America/New_York');
    const withDst = intlCalls(() => zone.segmentAt(second('2031-06-15T00:00Z')));
    expect(withDst).toBeLessThan(200);
    const segments = [];
    for (let t = second('2031-01-01T00:00Z'); t < second('2032-01-01T00:00Z'); ) {
      const segment = zone.segmentAt(t);
      segments.push(segment);
      t = segment.end;
    }
    expect(segments).toEqual([
      { start: second('2031-01-01T00:00Z'), end: second('2031-03-09T07:00Z'), offset: -18_000, before: -18_000 },
      { start: second('2031-03-09T07:00Z'), end: second('2031-11-02T06:00Z'), offset: -14_400, before: -18_000 },
      { start: second('2031-11-02T06:00Z'), end: second('2032-01-01T00:00Z'), offset: -18_000, before: -14_400 },
    ]);
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

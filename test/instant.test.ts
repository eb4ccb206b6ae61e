/**
 * Instants at the boundary: ISO-8601 strings parsed strictly (no impossible date
 * rolled over, no host-time-zone reading), numbers and Dates kept within the Date
 * range, fractions truncated as `new Date()` truncates them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readInstant } from '../src/instant.js';

const ms = (value: Date | string | number): number | string => {
  const reading = readInstant(value);
  return 'ms' in reading ? reading.ms : reading.problem;
};

describe('readInstant', () => {
  it('agrees with Date.parse on every valid ISO-8601 form it accepts', () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    fc.assert(
      fc.property(
        fc.date({ min: new Date('-200000-01-01T00:00:00Z'), max: new Date('+200000-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+05:30', '-09:45', '+1400', '-1200'),
        fc.constantFrom('T', 't', ' '),
        fc.constantFrom('', ':SS', ':SS.f', ':SS.fff', ':SS.fffffffff'),
        two(59),
        (date, zone, separator, seconds, s) => {
          const iso = date.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ, or ±YYYYYY-...
          const [day, time] = iso.split('T') as [string, string];
          const text = `${day}${separator}${time.slice(0, 5)}${seconds.replace('SS', s).replace(/f+/, (f) => '123456789'.slice(0, f.length))}${zone}`;
          const expected = Date.parse(text.replace(/t| /, 'T').replace('z', 'Z').replace(/([+-]\d{2})(\d{2})$/, '$1:$2').replace(/\.(\d{3})\d+/, '.$1'));
          expect(ms(text), text).toBe(expected);
        },
      ),
      { numRuns: 3_000 },
    );
    expect(ms('2026-01-01')).toBe(Date.UTC(2026, 0, 1));
    expect(ms('2026-03')).toBe(Date.UTC(2026, 2, 1));
    expect(ms('2026')).toBe(Date.UTC(2026, 0, 1));
    expect(ms('0050-06-01')).toBe(Date.parse('0050-06-01')); // not 1950
    expect(ms('2024-02-29T12:00:00+01:00')).toBe(Date.UTC(2024, 1, 29, 11));
    expect(ms(' 2026-01-01T00:00:00.999999Z ')).toBe(Date.UTC(2026, 0, 1) + 999);
  });

  it.each([
    ['2026-02-30T00:00:00Z', /no day 30 in 2026-02/],
    ['2026-02-29', /no day 29/],
    ['1900-02-29', /no day 29/],
    ['2026-04-31', /no day 31/],
    ['2026-00-10', /no month 00/],
    ['2026-13-01', /no month 13/],
    ['2026-01-00', /no day 00/],
    ['2026-01-01T24:00:00Z', /no time of day 24:00:00/],
    ['2026-01-01T23:60Z', /no time of day 23:60/],
    ['2026-01-01T23:59:60Z', /no time of day 23:59:60/],
    ['2026-01-01T10:00:00+24:00', /no UTC offset \+24:00/],
    ['2026-01-01T10:00:00+01:60', /no UTC offset/],
    ['2026-01-01T10:00:00', /must end in Z or an offset/],
    ['2026-01-01T10:00', /must end in Z or an offset/],
    ['-000000-01-01', /-000000/],
    ['+275760-09-13T00:00:00.001Z', /between/],
    ['-271821-04-19T23:59:59Z', /between/],
    ['Jan 1 2026', /ISO-8601/],
    ['2026/01/01', /ISO-8601/],
    ['20260101', /ISO-8601/],
    ['2026-1-1', /ISO-8601/],
    ['', /ISO-8601/],
    ['1767225600000', /ISO-8601/],
  ])('refuses %j', (text, problem) => {
    expect(ms(text)).toMatch(problem);
  });

  it('keeps numbers and Dates within the Date range, truncating fractions as new Date() does', () => {
    expect(ms(8.64e15)).toBe(8.64e15);
    expect(ms(-8.64e15)).toBe(-8.64e15);
    expect(ms(8.64e15 + 1)).toMatch(/between/);
    expect(ms(-8.64e15 - 1)).toMatch(/between/);
    expect(ms(NaN)).toMatch(/between/);
    expect(ms(Infinity)).toMatch(/between/);
    expect(ms(new Date(NaN))).toMatch(/between/);
    expect(ms(1767225600000.9)).toBe(1767225600000);
    expect(ms(-1.5)).toBe(-1);
    expect(Object.is(ms(-0.5), 0)).toBe(true);
  });
});

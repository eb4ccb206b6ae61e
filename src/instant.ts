/**
 * Instants at the public boundary: a `Date`, an ISO-8601 string or epoch
 * milliseconds, normalized to whole epoch milliseconds within the range a `Date`
 * can hold (±8.64e15 ms, about ±273,790 years). A fractional number is truncated
 * as `new Date(n)` truncates it.
 *
 * Strings are parsed strictly, not by `Date.parse`, which accepts any format its
 * engine likes and rolls impossible dates over (`2026-02-30` becomes March 2nd):
 * `YYYY`, `YYYY-MM`, `YYYY-MM-DD` (UTC midnight), or a date with a time of day
 * `THH:MM`, `THH:MM:SS` or `THH:MM:SS.fff` (up to 9 fraction digits, truncated to
 * the millisecond) followed by `Z` or an offset `±HH:MM`. A time of day without an
 * offset is refused: `Date.parse` would read it in the host's time zone, and two
 * instances of an app in different zones would disagree on the instant. Years may
 * be given as `±YYYYYY`; `T` may be a space; `T` and `Z` may be lowercase.
 */

const ISO =
  /^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?)?)?$/;

/** The result of reading an instant: epoch milliseconds, or why it is not one. */
export type InstantReading = { readonly ms: number } | { readonly problem: string };

/** Reads a `Date`, ISO-8601 string or epoch-milliseconds number as whole epoch milliseconds. */
export function readInstant(value: Date | string | number): InstantReading {
  if (typeof value === 'string') return readIsoString(value);
  // `new Date(n)` truncates a fraction, and is Invalid beyond ±8.64e15 ms.
  const ms = (value instanceof Date ? value : new Date(value)).getTime();
  return Number.isNaN(ms) ? { problem: RANGE } : { ms };
}

const RANGE = 'must be a valid instant between -271821-04-20T00:00:00Z and +275760-09-13T00:00:00Z';

function readIsoString(text: string): InstantReading {
  const match = ISO.exec(text.trim());
  if (match === null) {
    return { problem: 'must be an ISO-8601 instant such as "2026-01-01", "2026-01-01T09:30:00Z" or "2026-01-01T09:30:00+02:00"' };
  }
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction, zone] = match as unknown as (string | undefined)[];
  const year = Number(yearText);
  if (yearText === '-000000') return { problem: 'has year -000000, which ISO 8601 does not allow (use 0000)' };
  const month = monthText === undefined ? 1 : Number(monthText);
  const day = dayText === undefined ? 1 : Number(dayText);
  if (month < 1 || month > 12) return { problem: `has no month ${monthText}` };
  if (day < 1 || day > daysInMonth(year, month)) return { problem: `has no day ${dayText} in ${yearText}-${monthText}` };
  let ms = civilToEpochMs(year, month, day);
  if (hourText !== undefined) {
    if (zone === undefined) {
      return { problem: 'must end in Z or an offset such as +02:00 when it has a time of day (otherwise it depends on the host\'s time zone)' };
    }
    const hour = Number(hourText);
    const minute = Number(minuteText);
    const second = secondText === undefined ? 0 : Number(secondText);
    if (hour > 23 || minute > 59 || second > 59) return { problem: `has no time of day ${hourText}:${minuteText}${secondText === undefined ? '' : `:${secondText}`}` };
    const millis = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + millis;
    const offset = zone.toUpperCase() === 'Z' ? 0 : offsetMinutes(zone);
    if (offset === undefined) return { problem: `has no UTC offset ${zone}` };
    ms -= offset * 60_000;
  }
  return readInstant(ms);
}

/** `+05:30` or `+0530` as minutes east of UTC; undefined when out of range. */
function offsetMinutes(zone: string): number | undefined {
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Midnight UTC of a proleptic Gregorian date, any year (`Date.UTC` would read years 0-99 as 1900-1999). */
function civilToEpochMs(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

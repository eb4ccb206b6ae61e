/**
 * Durations: a number of milliseconds or a compact string such as `'1h30m'`.
 * Parsing is strict: every character must belong to a `<number><unit>` pair. A
 * duration is whole milliseconds (a fraction is rounded to the nearest one, so
 * every store gets integers) from 0 to `MAX_DURATION_MS`.
 */
import { ValidationError } from './errors.js';

/** The units of a duration string: milliseconds, seconds, minutes, hours, days, weeks. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd' | 'w';

type DurationPart = `${number}${DurationUnit}`;

/**
 * A duration as text: a number of milliseconds (`'500'`), or one to three
 * `<number><unit>` pairs (`'10s'`, `'1h30m'`, `'1d2h30m'`). A template-literal type,
 * so `'10x'` or `'90 seconds'` fail at compile time; a string built at run time
 * needs `as DurationString` (it is still checked when it arrives).
 */
export type DurationString = `${number}` | DurationPart | `${DurationPart}${DurationPart}` | `${DurationPart}${DurationPart}${DurationPart}`;

/**
 * Milliseconds, or a string of `<number><unit>` pairs: `'500ms'`, `'10s'`, `'5m'`, `'2h'`,
 * `'1d'`, `'1w'`, `'1h30m'`. Rounded to whole milliseconds; 0 to 100 years.
 */
export type Duration = number | DurationString;

const UNIT_MS = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

/**
 * The longest duration: 100 years (36,525 days). Longer than any schedule, deadline
 * or retention means anything, and short enough that adding one to any instant a
 * `Date` can show stays exact (far below 2^53) and fits every store's integers.
 */
export const MAX_DURATION_MS = 36_525 * 86_400_000;

/** How the boundary describes the durations it accepts: shown whenever one is refused. */
export const DURATION_FORMS =
  'a number of milliseconds (500) or a string of <number><unit> pairs with units ms, s, m, h, d, w ("500ms", "10s", "5m", "2h", "1d", "1h30m")';

/** How the boundary describes the durations it accepts. */
const DURATION_RANGE = `0 to ${MAX_DURATION_MS} ms (100 years): ${DURATION_FORMS}`;

/**
 * Parses a duration to whole milliseconds, or returns `undefined` when the input is
 * not a duration from 0 to `MAX_DURATION_MS`. Callers at the public boundary turn
 * `undefined` into a `ValidationError` naming the field.
 */
export function parseDuration(input: unknown): number | undefined {
  const ms = typeof input === 'number' ? input : typeof input === 'string' ? parseText(input.trim()) : undefined;
  // `+ 0` turns -0 into 0.
  return ms !== undefined && ms >= 0 && ms <= MAX_DURATION_MS ? Math.round(ms) + 0 : undefined;
}

function parseText(text: string): number | undefined {
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const match = PART.exec(text);
    if (match === null) return undefined;
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  return total;
}

/** Parses a duration argument or throws a `ValidationError` naming it, headed by `context` (e.g. `sleep`). */
export function requireDuration(duration: unknown, context: string): number {
  const ms = parseDuration(duration);
  if (ms === undefined) {
    throw new ValidationError(context, [{ path: 'duration', message: `must be a duration of ${DURATION_RANGE}`, value: duration }]);
  }
  return ms;
}

/**
 * Durations: a number of milliseconds or a compact string such as `'1h30m'`.
 * Parsing is strict: every character must belong to a `<number><unit>` pair.
 */
import { ValidationError } from './errors.js';

/** Milliseconds, or a string of `<number><unit>` pairs: `'500ms'`, `'10s'`, `'5m'`, `'2h'`, `'1d'`, `'1h30m'`. */
export type Duration = number | string;

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
 * Parses a duration to milliseconds, or returns `undefined` when the input is not
 * a valid, finite, non-negative duration. Callers at the public boundary turn
 * `undefined` into a `ValidationError` naming the field.
 */
export function parseDuration(input: Duration): number | undefined {
  if (typeof input === 'number') {
    return Number.isFinite(input) && input >= 0 ? input : undefined;
  }
  if (typeof input !== 'string') return undefined;
  const text = input.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const match = PART.exec(text);
    if (match === null) return undefined;
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** Parses a duration argument or throws a `ValidationError` naming it, headed by `context` (e.g. `sleep`). */
export function requireDuration(duration: Duration, context: string): number {
  const ms = parseDuration(duration);
  if (ms === undefined) {
    throw new ValidationError(context, [{ path: 'duration', message: 'must be a non-negative duration', value: duration }]);
  }
  return ms;
}

/** Small helpers for schedule tests: ISO in, ISO out, both directions. */
import { expect } from 'vitest';
import { compileSchedule, type Schedule } from '../../src/schedule/index.js';

export const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad ISO ${iso}`);
  return t;
};

export const iso = (t: number | undefined): string | undefined =>
  t === undefined ? undefined : new Date(t).toISOString().replace('.000Z', 'Z');

export const cron = (expression: string, timezone = 'UTC'): Schedule =>
  compileSchedule({ kind: 'cron', expression }, timezone, 0);

/** Ticks in (from, to], found with next(). */
export function forward(schedule: Schedule, from: string, to: string): string[] {
  const out: string[] = [];
  const end = at(to);
  for (let t = schedule.next(at(from)); t !== undefined && t <= end; t = schedule.next(t)) out.push(iso(t)!);
  return out;
}

/** Ticks in (from, to], found with latest(), oldest first. */
export function backward(schedule: Schedule, from: string, to: string): string[] {
  const out: string[] = [];
  const start = at(from);
  for (let t = schedule.latest(at(to)); t !== undefined && t > start; t = schedule.latest(t - 1)) out.push(iso(t)!);
  return out.reverse();
}

/** Asserts that next() and latest() both find exactly `expected` in (from, to]. */
export function expectTicks(schedule: Schedule, from: string, to: string, expected: string[]): void {
  expect(forward(schedule, from, to), 'walking forward with next()').toEqual(expected);
  expect(backward(schedule, from, to), 'walking backward with latest()').toEqual(expected);
}

/**
 * For every `step` in [from, to] (and a millisecond either side): latest and next
 * bracket t and describe one tick set. Returns the number of instants checked.
 */
export function expectAgreement(schedule: Schedule, from: string, to: string, step = 60_000): number {
  const problems: string[] = [];
  let checked = 0;
  for (let t = at(from); t <= at(to); t += step) {
    for (const q of [t, t - 1, t + 1]) {
      const latest = schedule.latest(q);
      const next = schedule.next(q);
      const ok =
        (latest === undefined || (latest <= q && schedule.next(latest) === next)) &&
        (next === undefined ||
          (next > q && schedule.latest(next) === next && schedule.latest(next - 1) === latest));
      if (!ok) problems.push(`at ${iso(q)}: latest ${iso(latest)}, next ${iso(next)}`);
      checked++;
    }
  }
  expect(problems.slice(0, 5)).toEqual([]);
  return checked;
}

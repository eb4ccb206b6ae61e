/**
 * Schedules: pure time maths from a schedule spec to its ticks. No clock reads, no
 * timers; every query takes its reference instant (epoch milliseconds).
 */
import { ValidationError } from '../errors.js';
import { parseCron } from './cron.js';
import { CronSchedule } from './cron-schedule.js';
import { IntervalSchedule } from './interval.js';
import { Memo } from './memo.js';
import { OneOffSchedule } from './one-off.js';
import { tickNotes, type TickNotes } from './tick-notes.js';
import type { Schedule, ScheduleSpec } from './types.js';
import { ZoneCache } from './zone.js';

export type { Schedule } from './types.js';
export type { TickNotes } from './tick-notes.js';
export type { ScheduleSpec } from './types.js';

// Shared across schedules, because both are pure functions of their key: a zone's transitions
// are tzdata facts, found once (see zone.ts), and a parsed expression depends only on its text.
// Registering 100,000 jobs validates and compiles each expression once, not twice per job.
const zones = new ZoneCache();
const MAX_EXPRESSIONS_KEPT = 10_000;
const expressions = new Memo(MAX_EXPRESSIONS_KEPT, parseCron);

function parse(expression: string): ReturnType<typeof parseCron> {
  return expressions.get(expression);
}

/**
 * The spec of a cron expression, one shared object per text: jobs on the same
 * expression then share their compiled schedule too (`ScheduleCache` looks specs up
 * by identity), so 100,000 jobs on one expression hold one spec and one schedule.
 */
const cronSpecs = new Memo(MAX_EXPRESSIONS_KEPT, (expression: string): ScheduleSpec => Object.freeze({ kind: 'cron', expression }));

export function cronSpec(expression: string): ScheduleSpec {
  return cronSpecs.get(expression);
}

/** True when the time zone is known (IANA names, `UTC`, `Etc/GMT+5`, ...). */
export function isValidTimeZone(tz: string): boolean {
  return typeof tz === 'string' && zones.get(tz) !== undefined;
}

/**
 * Validates a cron expression (and, when given, a time zone): undefined when valid,
 * otherwise a human message naming the field, e.g. "minute field: 61 is out of range 0-59".
 */
export function cronProblem(expression: string, timezone?: string): string | undefined {
  const parsed = parse(expression);
  if ('problem' in parsed) return parsed.problem;
  if (timezone !== undefined && !isValidTimeZone(timezone)) return `unknown time zone ${JSON.stringify(timezone)}`;
  return undefined;
}

/**
 * Compiles a spec into its tick set. `timezone` (IANA) applies to cron expressions;
 * `defaultAnchor` is the anchor of an `every` spec that has none (the job's creation
 * time). Throws `ValidationError` on an invalid expression, time zone or interval.
 *
 * @example
 * const schedule = compileSchedule({ kind: 'cron', expression: '30 2 * * *' }, 'America/New_York', 0);
 * schedule.next(Date.parse('2026-03-08T05:00:00Z')); // 2026-03-08T07:30:00Z: 02:30 does not exist, 03:30 EDT
 */
export function compileSchedule(spec: ScheduleSpec, timezone: string, defaultAnchor: number): Schedule {
  switch (spec.kind) {
    case 'cron': {
      const zone = zones.get(timezone);
      if (zone === undefined) {
        throw new ValidationError('invalid schedule', [
          { path: 'timezone', message: 'unknown IANA time zone', value: timezone },
        ]);
      }
      const parsed = parse(spec.expression);
      if ('problem' in parsed) {
        throw new ValidationError('invalid schedule', [
          { path: 'schedule', message: `bad cron expression: ${parsed.problem}`, value: spec.expression },
        ]);
      }
      return new CronSchedule(parsed.cron, zone);
    }
    case 'every': {
      const anchor = spec.anchor ?? defaultAnchor;
      if (!(Number.isFinite(spec.everyMs) && spec.everyMs > 0)) {
        throw new ValidationError('invalid schedule', [
          { path: 'schedule.every', message: 'must be a positive duration', value: spec.everyMs },
        ]);
      }
      if (!Number.isFinite(anchor)) {
        throw new ValidationError('invalid schedule', [
          { path: 'schedule.anchor', message: 'must be a finite instant', value: anchor },
        ]);
      }
      return new IntervalSchedule(spec.everyMs, anchor);
    }
    case 'at': {
      if (!Number.isFinite(spec.at)) {
        throw new ValidationError('invalid schedule', [
          { path: 'schedule.at', message: 'must be a finite instant', value: spec.at },
        ]);
      }
      return new OneOffSchedule(spec.at);
    }
  }
}

/**
 * A tick's place on the wall clock of `timezone`: wall-clock time, offset, and the
 * daylight-saving marks of a preview (shifted by a gap, in a repeated hour). The spec and
 * zone must be valid (`compileSchedule` accepted them).
 */
export function describeTick(spec: ScheduleSpec, timezone: string, tick: number): TickNotes {
  const zone = zones.get(timezone);
  if (zone === undefined) throw new RangeError(`unknown time zone ${JSON.stringify(timezone)}`);
  const parsed = spec.kind === 'cron' ? parse(spec.expression) : undefined;
  const calendar = parsed !== undefined && 'cron' in parsed ? parsed.cron.calendar : undefined;
  return tickNotes(zone, tick, calendar === undefined ? undefined : (wall) => calendar.next(wall) === wall);
}

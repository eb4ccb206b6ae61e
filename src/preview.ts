/**
 * Schedule preview: the ticks of a schedule, without a scheduler or a store. Input is
 * validated as `register()` validates it, and the ticks come from the same compiled
 * schedule the scheduler fires by (schedule/), daylight-saving rules included.
 */
import * as z from 'zod/mini';
import { systemClock } from './clock.js';
import { ValidationError, messageOf } from './errors.js';
import { checkZoneAndCron, maxRunsSchema, scheduleSchema, toScheduleSpec } from './job-definition.js';
import { countArgSchema, instantSchema } from './options.js';
import { defaultAnchor } from './planner.js';
import { compileSchedule, describeTick } from './schedule/index.js';
import { WindowedSchedule } from './schedule/window.js';
import type { ScheduleSpec } from './store.js';
import type { Instant, ScheduleInput } from './types.js';
import { parseInput, strictObject } from './validation.js';

export interface NextTicksOptions {
  /** IANA time zone of a cron expression (also the zone of `previewTicks`' wall-clock times). @default 'UTC' */
  readonly timezone?: string;
  /** The ticks strictly after this instant; an `{ every }` without `anchor` is anchored here, to the second. @default now */
  readonly after?: Instant;
  /** How many ticks, 1 to 10,000 (fewer when the schedule has no more). @default 10 */
  readonly count?: number;
  /** A job's window: no tick before `startAt` or after `endAt` (as `register()` takes them). */
  readonly startAt?: Instant;
  readonly endAt?: Instant;
  /** A job's `maxRuns`: at most this many ticks, as a job registered at `after` would run. */
  readonly maxRuns?: number;
}

export interface LatestTickOptions {
  /** IANA time zone of a cron expression. @default 'UTC' */
  readonly timezone?: string;
  /** The latest tick at or before this instant; an `{ every }` without `anchor` is anchored here, to the second. @default now */
  readonly at?: Instant;
}

/** A tick with its place on the zone's wall clock, as `previewTicks` returns it. */
export interface TickPreview {
  readonly at: Date;
  /** Wall-clock time in the zone, e.g. `2026-03-08T03:30:00`. */
  readonly local: string;
  /** UTC offset in force at the tick, e.g. `-04:00`. */
  readonly offset: string;
  /**
   * Set when the tick stands for a wall-clock time that a daylight-saving gap skipped
   * (it then fires shifted by the gap): that skipped time, e.g. `2026-03-08T02:30:00`.
   */
  readonly shiftedFrom?: string;
  /** Set when the tick's wall-clock time happens twice (fall back): which occurrence this tick is. */
  readonly repeated?: 'first' | 'second';
}

const timezoneSchema = z._default(z.string({ error: 'must be a string' }), 'UTC');

const nextTicksSchema = strictObject({
  schedule: scheduleSchema,
  timezone: timezoneSchema,
  after: z.optional(instantSchema),
  count: z._default(countArgSchema, 10),
  startAt: z.optional(instantSchema),
  endAt: z.optional(instantSchema),
  maxRuns: z.optional(maxRunsSchema),
}).check(z.superRefine(checkZoneAndCron));

const latestTickSchema = strictObject({
  schedule: scheduleSchema,
  timezone: timezoneSchema,
  at: z.optional(instantSchema),
}).check(z.superRefine(checkZoneAndCron));

/**
 * The next `count` ticks of a schedule strictly after `after`, as the scheduler would
 * fire them. Throws a `ValidationError` on the input `register()` refuses.
 *
 * @example
 * nextTicks('30 2 * * *', { timezone: 'America/New_York', after: '2026-03-07T12:00:00Z', count: 2 });
 * // [2026-03-08T07:30:00.000Z (03:30 EDT: 02:30 was skipped), 2026-03-09T06:30:00.000Z]
 */
export function nextTicks(schedule: ScheduleInput, options: NextTicksOptions = {}): Date[] {
  return ticksAfter('nextTicks()', schedule, options).ticks.map((tick) => new Date(tick));
}

/**
 * The latest tick of a schedule at or before `at` (undefined when there is none, e.g. a
 * one-off still to come): the tick a scheduler started at `at` would treat as due.
 *
 * @example
 * latestTick('0 9 * * 1-5', { timezone: 'Europe/Paris', at: '2026-06-07T12:00:00Z' }); // Friday 2026-06-05T07:00:00.000Z
 */
export function latestTick(schedule: ScheduleInput, options: LatestTickOptions = {}): Date | undefined {
  const input = readArguments(latestTickSchema, schedule, options, 'latestTick()');
  const at = input.at ?? systemClock.now();
  const tick = compileSchedule(toScheduleSpec(input.schedule), input.timezone, defaultAnchor(at)).latest(at);
  return tick === undefined ? undefined : new Date(tick);
}

/**
 * The ticks of `nextTicks`, each with its wall-clock time and offset in `timezone`, and
 * marked when a daylight-saving gap shifted it or its wall-clock time happens twice.
 *
 * @example
 * previewTicks('30 2 * * *', { timezone: 'America/New_York', after: '2026-03-07T12:00:00Z', count: 1 });
 * // [{ at: 2026-03-08T07:30:00.000Z, local: '2026-03-08T03:30:00', offset: '-04:00', shiftedFrom: '2026-03-08T02:30:00' }]
 */
export function previewTicks(schedule: ScheduleInput, options: NextTicksOptions = {}): TickPreview[] {
  const { spec, timezone, ticks } = ticksAfter('previewTicks()', schedule, options);
  return ticks.map((tick) => {
    const notes = describeTick(spec, timezone, tick);
    const preview: { -readonly [K in keyof TickPreview]: TickPreview[K] } = { at: new Date(tick), local: wallText(notes.wall), offset: offsetText(notes.offset) };
    if (notes.shiftedFrom !== undefined) preview.shiftedFrom = wallText(notes.shiftedFrom);
    if (notes.repeated !== undefined) preview.repeated = notes.repeated;
    return preview;
  });
}

function ticksAfter(context: string, schedule: unknown, options: unknown): { spec: ScheduleSpec; timezone: string; ticks: number[] } {
  const input = readArguments(nextTicksSchema, schedule, options, context);
  const after = input.after ?? systemClock.now();
  const spec = toScheduleSpec(input.schedule);
  const ticksOf = compileSchedule(spec, input.timezone, defaultAnchor(after));
  const compiled = input.startAt === undefined && input.endAt === undefined ? ticksOf : new WindowedSchedule(ticksOf, input.startAt, input.endAt);
  const count = Math.min(input.count, input.maxRuns ?? Infinity);
  const ticks: number[] = [];
  for (let from = after; ticks.length < count; ) {
    const tick = compiled.next(from);
    if (tick === undefined) break;
    ticks.push(tick);
    from = tick;
  }
  return { spec, timezone: input.timezone, ticks };
}

/** The schedule and the options, parsed as one object so that every issue names its field (`schedule.every`, `count`). */
function readArguments<Schema extends z.ZodMiniType>(schema: Schema, schedule: unknown, options: unknown, context: string): z.output<Schema> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ValidationError(context, [{ path: 'options', message: 'must be an object', value: options }]);
  }
  let input: Record<string, unknown>;
  try {
    if (Object.hasOwn(options, 'schedule')) {
      throw new ValidationError(context, [{ path: 'options.schedule', message: 'is not an option (the schedule is the first argument)', value: (options as Record<string, unknown>).schedule }]);
    }
    input = { ...options, schedule };
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError(context, [{ path: 'options', message: `could not be read (${messageOf(error)})`, value: undefined }]);
  }
  return parseInput(schema, input, context);
}

/** Zone-less seconds as `YYYY-MM-DDTHH:mm:ss`. */
function wallText(wall: number): string {
  return new Date(wall * 1000).toISOString().replace(/\.\d{3}Z$/, '');
}

/** Seconds east of UTC as `+05:30` (`-04:56:02` for a local mean time). */
function offsetText(offset: number): string {
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const pad = (n: number) => String(n).padStart(2, '0');
  const text = `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor((abs % 3600) / 60))}`;
  return abs % 60 === 0 ? text : `${text}:${pad(abs % 60)}`;
}

/**
 * What the dashboard shows about time: a job's next tick and next ticks with their
 * daylight-saving marks, and instants as wall times of a zone. The ticks come from
 * the scheduler's own schedule code (`ScheduleCache`, `previewTicks()`), so they are
 * the ticks it fires.
 */
import { anchorOf, nextRunTick, runsLeft } from '../planner.js';
import type { Draft } from '../draft.js';
import { previewTicks, type NextTicksOptions, type TickPreview } from '../preview.js';
import { ScheduleCache } from '../schedule-cache.js';
import { ZoneCache } from '../schedule/zone.js';
import type { JobRecord } from '../store.js';
import type { ScheduleInput } from '../types.js';

/** A tick as the job's page lists it: `previewTicks()`' wall-clock time, offset and daylight-saving marks. */
export type Tick = TickPreview;

export class TickReader {
  readonly #schedules = new ScheduleCache();
  readonly #zones = new ZoneCache();

  /** The job's next run's tick, as `getJob().nextRunAt` (`nextRunTick`). */
  nextTick(job: JobRecord, now: number): number | undefined {
    return nextRunTick(this.#schedules.of(job), job, now);
  }

  /**
   * The next `count` ticks after `now` through the public `previewTicks()`, each marked
   * when a daylight-saving gap shifted it or its wall-clock time happens twice.
   */
  nextTicks(job: JobRecord, now: number, count: number): Tick[] {
    const left = runsLeft(job);
    if (left === 0) return [];
    const schedule = job.schedule;
    const input: ScheduleInput =
      schedule.kind === 'cron'
        ? schedule.expression
        : schedule.kind === 'at'
          ? { at: schedule.at }
          : { every: schedule.everyMs, anchor: anchorOf(schedule, job.createdAt) };
    // With a run limit, the ticks left are counted from the cursor (a run created ahead of its tick has counted).
    const after = left === undefined ? now : Math.max(now, job.cursor);
    const options: Draft<NextTicksOptions> = { timezone: job.timezone, after, count };
    if (job.startAt !== undefined) options.startAt = job.startAt;
    if (job.endAt !== undefined) options.endAt = job.endAt;
    if (left !== undefined) options.maxRuns = left;
    return previewTicks(input, options);
  }

  /** `2026-03-08 03:30 -04:00`: the instant as a wall time of `timezone` (UTC when unknown). */
  wallTime(at: number, timezone: string): string {
    const zone = this.#zones.get(timezone);
    const offset = zone === undefined ? 0 : zone.offsetAt(Math.floor(at / 1000));
    const wall = new Date(at + offset * 1000).toISOString();
    const seconds = wall.slice(17, 19) === '00' ? '' : wall.slice(16, 19);
    return `${wall.slice(0, 10)} ${wall.slice(11, 16)}${seconds} ${formatOffset(offset)}`;
  }
}

export function formatOffset(offsetSeconds: number): string {
  const sign = offsetSeconds < 0 ? '-' : '+';
  const minutes = Math.abs(offsetSeconds) / 60;
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

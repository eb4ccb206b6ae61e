/**
 * What the dashboard shows about time: a job's next tick and next ticks with their
 * daylight-saving marks, and instants as wall times of a zone. The ticks come from
 * the scheduler's own schedule code (`ScheduleCache`), so they are the ticks it fires.
 */
import { ScheduleCache } from '../runtime.js';
import { ZoneCache, type Zone } from '../schedule/zone.js';
import type { JobRecord } from '../store.js';

/** Why a tick is marked: it falls just after a spring-forward gap, or inside a repeated (fall-back) hour. */
export type DstMark =
  | { readonly kind: 'gap'; readonly gapSeconds: number }
  | { readonly kind: 'repeated'; readonly occurrence: 1 | 2; readonly foldSeconds: number };

export interface Tick {
  readonly at: number;
  readonly dst?: DstMark;
}

export class TickReader {
  readonly #schedules = new ScheduleCache();
  readonly #zones = new ZoneCache();

  /** The tick after the cursor, unless the cursor is a tick still to come (its run created ahead): as `getJob().nextRunAt`. */
  nextTick(job: JobRecord, now: number): number | undefined {
    return this.#schedules.of(job).next(Math.min(job.cursor, now));
  }

  /** The next `count` ticks after `now`, each with its daylight-saving mark in the job's zone. */
  nextTicks(job: JobRecord, now: number, count: number): Tick[] {
    const schedule = this.#schedules.of(job);
    const zone = job.schedule.kind === 'cron' ? this.#zones.get(job.timezone) : undefined;
    const ticks: Tick[] = [];
    let after = now;
    for (let i = 0; i < count; i += 1) {
      const at = schedule.next(after);
      if (at === undefined) break;
      const dst = zone === undefined ? undefined : dstMark(zone, at);
      ticks.push(dst === undefined ? { at } : { at, dst });
      after = at;
    }
    return ticks;
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

function dstMark(zone: Zone, at: number): DstMark | undefined {
  const second = Math.floor(at / 1000);
  const segment = zone.segmentAt(second);
  const shift = segment.offset - segment.before;
  // Just after a transition: a gap's first `shift` seconds hold the ticks pushed out of it; a fold's first ones repeat wall times.
  if (shift > 0 && second - segment.start < shift) return { kind: 'gap', gapSeconds: shift };
  if (shift < 0 && second - segment.start < -shift) return { kind: 'repeated', occurrence: 2, foldSeconds: -shift };
  const following = zone.segmentAt(segment.end);
  const fold = following.before - following.offset;
  if (following.start === segment.end && fold > 0 && segment.end - second <= fold) return { kind: 'repeated', occurrence: 1, foldSeconds: fold };
  return undefined;
}

export function formatOffset(offsetSeconds: number): string {
  const sign = offsetSeconds < 0 ? '-' : '+';
  const minutes = Math.abs(offsetSeconds) / 60;
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

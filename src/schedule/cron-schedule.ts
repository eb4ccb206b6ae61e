/**
 * Cron schedules in a time zone: turns the wall-clock matches of `calendar.ts` into
 * instants under tickwork's daylight-saving policy (SPEC §3):
 *
 * - a wall-clock time inside a spring-forward gap fires once, at the instant that
 *   time names under the offset in force before the gap (02:30 in a 02:00-03:00 gap
 *   fires at 03:30); a tick that lands on another tick is one tick;
 * - a wall-clock time that happens twice (fall back) fires at its first occurrence
 *   only, unless the hour field is `*` or a step: then the schedule follows elapsed
 *   time and fires in both.
 *
 * The zone's timeline is walked as segments of constant offset (`zone.ts`). Within a
 * segment, wall clock and instants map one to one, so each segment needs one calendar
 * query, plus one for the wall-clock times skipped by a gap at its start. `next` and
 * `latest` walk the same segments in opposite directions with the same rules, so they
 * describe one tick set; `latest` never enumerates ticks, only segments.
 *
 * Between a segment without a tick and the next wall-clock match, nothing can fire:
 * every tick's wall-clock time (or, in a gap, the skipped time it stands for) lies within
 * `MAX_OFFSET` of its instant. So the walk jumps from such a segment to the first instant
 * that could carry the next match, and a sparse expression (a fifth Friday of February,
 * ~28 years apart) reads the zone near its ticks only, not every chunk in between.
 *
 * Why not cron-parser's own next()/prev(): in 5.10 prev() disagrees with next() on
 * spring-forward days (America/New_York 2026-03-08) and next() skips the whole day of
 * a 30-minute gap (Australia/Lord_Howe 2026-10-04).
 */
import type { CronCalendar } from './calendar.js';
import type { ParsedCron } from './cron.js';
import type { Schedule } from './types.js';
import { MAX_OFFSET, type Zone } from './zone.js';

// Epoch seconds a Date can hold.
const MAX_SECOND = 8_640_000_000_000;
// A valid pattern fires within every 400-year Gregorian cycle; give up beyond it.
const HORIZON = 401 * 366 * 86_400;

export class CronSchedule implements Schedule {
  readonly #calendar: CronCalendar;
  readonly #zone: Zone;
  readonly #followsElapsedTime: boolean;

  constructor(cron: ParsedCron, zone: Zone) {
    this.#calendar = cron.calendar;
    this.#zone = zone;
    this.#followsElapsedTime = cron.followsElapsedTime;
  }

  next(after: number): number | undefined {
    if (Number.isNaN(after) || after >= MAX_SECOND * 1000) return undefined;
    // Ticks fall on whole seconds (offsets are whole seconds).
    let from = Math.max(Math.floor(after / 1000) + 1, -MAX_SECOND);
    const limit = from + HORIZON;
    const calendar = this.#calendar;
    while (from <= limit && from <= MAX_SECOND) {
      const { start, end, offset, before } = this.#zone.segmentAt(from);
      let best: number | undefined;
      let wall = calendar.next(from + offset);
      if (wall === undefined) return undefined;
      // Fall back at `start`: wall-clock times below start + before were shown by the
      // previous segment already; their first occurrence was there.
      if (before > offset && !this.#followsElapsedTime && wall < start + before) {
        wall = calendar.next(start + before);
        if (wall === undefined) return undefined;
      }
      if (wall - offset < end) best = wall - offset;
      // Spring forward at `start`: wall-clock times [start + before, start + offset) were
      // skipped; each fires at (its wall-clock time - before), inside [start, start + gap).
      // Those at or after `end` belong to the next segment, which starts at the same
      // transition when `end` is only a year boundary (zone.ts).
      if (before < offset && from < start + (offset - before)) {
        const skipped = calendar.next(from + before);
        if (skipped !== undefined && skipped < start + offset && skipped - before < end) {
          const at = skipped - before;
          if (best === undefined || at < best) best = at;
        }
      }
      if (best !== undefined) return best <= MAX_SECOND ? best * 1000 : undefined;
      // A tick at or after `end` has a wall-clock time (or skipped time) of at least end - MAX_OFFSET.
      const match = calendar.next(end - MAX_OFFSET);
      if (match === undefined) return undefined;
      from = Math.max(end, match - MAX_OFFSET);
    }
    return undefined;
  }

  latest(at: number): number | undefined {
    if (Number.isNaN(at) || at < -MAX_SECOND * 1000) return undefined;
    let to = Math.min(Math.floor(at / 1000), MAX_SECOND);
    const limit = to - HORIZON;
    const calendar = this.#calendar;
    while (to >= limit && to >= -MAX_SECOND) {
      const { start, offset, before } = this.#zone.segmentAt(to);
      let best: number | undefined;
      const wall = calendar.prev(to + offset);
      if (wall === undefined) return undefined;
      // Mirror of next(): the lowest wall-clock time that is a tick of this segment.
      const lowest = before > offset && !this.#followsElapsedTime ? start + before : start + offset;
      if (wall >= lowest) best = wall - offset;
      if (before < offset) {
        const top = Math.min(to + before, start + offset - 1);
        if (top >= start + before) {
          const skipped = calendar.prev(top);
          if (skipped !== undefined && skipped >= start + before) {
            const tick = skipped - before;
            if (best === undefined || tick > best) best = tick;
          }
        }
      }
      if (best !== undefined) return best >= -MAX_SECOND ? best * 1000 : undefined;
      // A tick before `start` has a wall-clock time (or skipped time) of at most start - 1 + MAX_OFFSET.
      const match = calendar.prev(start - 1 + MAX_OFFSET);
      if (match === undefined) return undefined;
      to = Math.min(start - 1, match + MAX_OFFSET);
    }
    return undefined;
  }
}

/**
 * Where a tick stands on its zone's wall clock, for previews: its wall-clock time and
 * offset, whether it stands for a wall-clock time a gap skipped (it then fires shifted
 * by the gap, see cron-schedule.ts), and whether its wall-clock time happens twice
 * (a fall-back fold). Pure: a function of the zone's offsets and the tick.
 */
import type { Zone } from './zone.js';

const DAY = 86_400;
// Longer than any fold (the longest are whole repeated days, e.g. Alaska in 1867).
const FOLD_REACH = 2 * DAY;

export interface TickNotes {
  /** Wall-clock time, in seconds on a zone-less clock (as if UTC). */
  readonly wall: number;
  /** UTC offset in force at the tick, seconds east. */
  readonly offset: number;
  /** The skipped wall-clock time (zone-less seconds) the tick stands for, when it is one. */
  readonly shiftedFrom?: number;
  /** The tick's wall-clock time happens twice: this is its first or second occurrence. */
  readonly repeated?: 'first' | 'second';
}

/**
 * `matches(wall)`: whether the schedule's fields match a wall-clock second (a cron
 * expression); undefined for elapsed-time schedules, which are never shifted.
 */
export function tickNotes(zone: Zone, tick: number, matches: ((wall: number) => boolean) | undefined): TickNotes {
  const second = Math.floor(tick / 1000);
  const segment = zone.segmentAt(second);
  const wall = second + segment.offset;
  if (matches !== undefined && !matches(wall) && segment.before < segment.offset) {
    const skipped = second + segment.before;
    if (matches(skipped)) return { wall, offset: segment.offset, shiftedFrom: skipped };
  }
  // The same wall-clock time under another offset in force nearby names another instant.
  for (const offset of offsetsAround(zone, second)) {
    const other = wall - offset;
    if (other !== second && zone.offsetAt(other) === offset) {
      return { wall, offset: segment.offset, repeated: other > second ? 'first' : 'second' };
    }
  }
  return { wall, offset: segment.offset };
}

function offsetsAround(zone: Zone, second: number): Set<number> {
  const offsets = new Set<number>();
  for (let t = second - FOLD_REACH; t <= second + FOLD_REACH; ) {
    const segment = zone.segmentAt(t);
    offsets.add(segment.offset);
    t = segment.end;
  }
  return offsets;
}

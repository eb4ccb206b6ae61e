/**
 * A brute-force reference for 5-field cron schedules in a time zone, written
 * independently of src/schedule: it walks real instants one minute at a time, reads
 * each minute's wall clock through Intl (per minute wherever the offset changes
 * within 15 minutes), matches it with its own small cron matcher,
 * and applies the DST policy directly:
 *  - a wall-clock minute seen for the second time (fall back) is a tick only when the
 *    hour field is `*` or a step;
 *  - wall-clock minutes skipped by a jump forward are ticks at (wall - offset before
 *    the jump).
 */

const WALL = /^(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;

/** Reads wall clocks of one zone. */
export class WallReader {
  readonly #format: Intl.DateTimeFormat;

  constructor(zone: string) {
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** Wall clock at epoch second `second`, as seconds on a zone-less clock. */
  wallAt(second: number): number {
    const m = WALL.exec(this.#format.format(second * 1000));
    if (m === null) throw new Error('unreadable wall clock');
    return Date.UTC(+m[3]!, +m[1]! - 1, +m[2]!, +m[4]!, +m[5]!, +m[6]!) / 1000;
  }

  offsetAt(second: number): number {
    return this.wallAt(second) - second;
  }
}

/** Offset transitions (epoch seconds of the first second under the new offset) in a UTC year. */
export function transitionsIn(reader: WallReader, year: number): number[] {
  const start = Date.UTC(year, 0, 1) / 1000;
  const end = Date.UTC(year + 1, 0, 1) / 1000;
  const found: number[] = [];
  let previous = start;
  let previousOffset = reader.offsetAt(start);
  for (let t = start + 12 * 3600; t <= end; t += 12 * 3600) {
    const offset = reader.offsetAt(t);
    if (offset !== previousOffset) {
      let low = previous;
      let high = t;
      while (high - low > 1) {
        const mid = Math.floor((low + high) / 2);
        if (reader.offsetAt(mid) === previousOffset) low = mid;
        else high = mid;
      }
      found.push(high);
    }
    previous = t;
    previousOffset = offset;
  }
  return found;
}

function parseField(text: string, min: number, max: number): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const [range, stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let low: number;
    let high: number;
    if (range === '*') {
      low = min;
      high = max;
    } else if (range!.includes('-')) {
      const [a, b] = range!.split('-');
      low = Number(a);
      high = Number(b);
    } else {
      low = Number(range);
      high = stepText === undefined ? low : max;
    }
    if (!(step > 0) || Number.isNaN(low) || Number.isNaN(high)) throw new Error(`oracle cannot read ${text}`);
    for (let v = low; v <= high; v += step) out.add(v);
  }
  return out;
}

/** Matches zone-less wall-clock seconds against a 5-field numeric cron expression. */
export function wallMatcher(expression: string): { matches: (wall: number) => boolean; elapsed: boolean } {
  const [minute, hour, dom, month, dow] = expression.split(' ') as [string, string, string, string, string];
  const minutes = parseField(minute, 0, 59);
  const hours = parseField(hour, 0, 23);
  const days = parseField(dom, 1, 31);
  const months = parseField(month, 1, 12);
  const weekdays = new Set([...parseField(dow, 0, 7)].map((d) => d % 7));
  const domStar = dom === '*';
  const dowStar = dow === '*';
  const matches = (wall: number): boolean => {
    const secondOfDay = ((wall % 86_400) + 86_400) % 86_400;
    if (secondOfDay % 60 !== 0) return false;
    if (!minutes.has((secondOfDay / 60) % 60) || !hours.has(Math.floor(secondOfDay / 3600))) return false;
    const date = new Date(wall * 1000);
    if (!months.has(date.getUTCMonth() + 1)) return false;
    const byDay = days.has(date.getUTCDate());
    const byWeekday = weekdays.has(date.getUTCDay());
    if (domStar && dowStar) return true;
    if (domStar) return byWeekday;
    if (dowStar) return byDay;
    return byDay || byWeekday;
  };
  return { matches, elapsed: hour.includes('*') || hour.includes('/') };
}

/**
 * All ticks (epoch seconds, sorted) found by walking minutes [from, to]. Ticks near
 * `from` may be wrong (an earlier occurrence of a repeated wall clock can lie before
 * the walk), so callers trust only ticks a day or more inside the window.
 */
export function oracleTicks(reader: WallReader, expression: string, from: number, to: number): number[] {
  const { matches, elapsed } = wallMatcher(expression);
  const ticks = new Set<number>();
  const seen = new Set<number>();
  let previousWall: number | undefined;
  // Intl is read every 15 minutes, and every minute in between only when the offset
  // changed within the block (one transition per 15 minutes at most).
  let blockStart = Number.NaN;
  let blockOffset = 0;
  let blockUniform = false;
  for (let t = Math.ceil(from / 60) * 60; t <= to; t += 60) {
    if (!(t < blockStart + 900)) {
      blockStart = t;
      blockOffset = reader.offsetAt(t);
      blockUniform = reader.offsetAt(t + 900) === blockOffset;
    }
    const wall = blockUniform ? t + blockOffset : reader.wallAt(t);
    if (previousWall !== undefined && wall - previousWall > 60) {
      const offsetBefore = previousWall - (t - 60);
      for (let skipped = previousWall + 60; skipped < wall; skipped += 60) {
        if (matches(skipped)) ticks.add(skipped - offsetBefore);
      }
    }
    if (matches(wall) && (elapsed || !seen.has(wall))) ticks.add(t);
    seen.add(wall);
    previousWall = wall;
  }
  return [...ticks].sort((a, b) => a - b);
}

/**
 * UTC offsets of IANA time zones. Owns the only use of `Intl` in schedule maths:
 * each zone's offset transitions are found once per UTC year (daily samples, then
 * bisection to the second) and kept, so the hot path is an array lookup and never
 * formats a date.
 *
 * All instants here are epoch SECONDS; offsets are seconds east of UTC.
 */

/** A stretch of time with one UTC offset, ending at a transition or at a UTC year boundary. */
export interface ZoneSegment {
  /**
   * First second of the segment: a transition, or the first second of a UTC year when no
   * transition happened in the few days before it. May lie in the previous UTC year.
   */
  readonly start: number;
  /** First second after the segment. */
  readonly end: number;
  /** Offset in force inside the segment. */
  readonly offset: number;
  /** Offset in force just before `start`; differs from `offset` only when `start` is a transition. */
  readonly before: number;
}

interface YearTable {
  readonly start: number;
  readonly end: number;
  readonly segments: readonly ZoneSegment[];
}

const DAY = 86_400;
// Longer than any gap or fold (the longest are whole skipped days, e.g. Pacific/Apia 2011).
const LOOKBACK = 3 * DAY;
// Intl output for early years carries an era and Date.UTC maps years 0-99 to the 1900s,
// and the last year a Date holds is incomplete; nothing is scheduled that far out, so
// offsets outside [MIN_SECOND, MAX_SECOND) are those at the nearer edge.
const MIN_SECOND = -59_011_459_200; // 0100-01-01T00:00:00Z
const MAX_SECOND = 8_615_994_624_000; // 275000-01-01T00:00:00Z, some way inside the Date range
// A year table costs ~400 Intl calls; bounded so a sweep over centuries cannot grow without end.
const MAX_YEARS_KEPT = 1_000;
// Bounded for the same reason; zones are few in practice.
const MAX_ZONES_KEPT = 500;

const WALL = /^(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;

export class Zone {
  readonly name: string;
  readonly #formatter: Intl.DateTimeFormat;
  readonly #years = new Map<number, YearTable>();
  #last: YearTable | undefined;

  constructor(name: string) {
    this.name = name;
    this.#formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** The segment containing epoch second `second`. */
  segmentAt(second: number): ZoneSegment {
    let table = this.#last;
    if (table === undefined || second < table.start || second >= table.end) {
      if (second < MIN_SECOND) return this.#edge(-Infinity, MIN_SECOND);
      if (second >= MAX_SECOND) return this.#edge(MAX_SECOND, Infinity);
      table = this.#table(new Date(second * 1000).getUTCFullYear());
      this.#last = table;
    }
    const segments = table.segments;
    for (let i = segments.length - 1; i > 0; i--) {
      const segment = segments[i]!;
      if (segment.start <= second) return segment;
    }
    return segments[0]!;
  }

  /** Offset in force at epoch second `second`. */
  offsetAt(second: number): number {
    return this.segmentAt(second).offset;
  }

  /** Beyond the years we scan, the offset at the edge holds forever. */
  #edge(start: number, end: number): ZoneSegment {
    const offset = this.#rawOffset(Number.isFinite(start) ? start : end);
    return { start, end, offset, before: offset };
  }

  #table(year: number): YearTable {
    let table = this.#years.get(year);
    if (table === undefined) {
      if (this.#years.size >= MAX_YEARS_KEPT) this.#years.clear();
      table = this.#scanYear(year);
      this.#years.set(year, table);
    }
    return table;
  }

  #scanYear(year: number): YearTable {
    const start = Date.UTC(year, 0, 1) / 1000;
    const end = Date.UTC(year + 1, 0, 1) / 1000;
    const segments: ZoneSegment[] = [];
    let segmentStart = start;
    let before = this.#rawOffset(start - 1);
    let current = before;
    let known = start - 1; // latest second whose offset is `current`
    // Year boundaries are not transitions, but a gap or fold that began shortly before
    // one still shapes the wall clock after it (Pacific/Kiritimati skipped 1994-12-31,
    // so the gap runs into 1995): the first segment then starts at that transition.
    const lookback = this.#rawOffset(start - LOOKBACK);
    if (lookback !== before) {
      const at = this.#firstChange(start - LOOKBACK, start - 1, lookback);
      if (this.#rawOffset(at) === before) {
        segmentStart = at;
        before = lookback;
      }
    }
    // Daily samples, then the last second of the year. Several transitions between two
    // samples are found one by one: each bisection finds the first change after `known`.
    for (let sample = start; ; sample = Math.min(sample + DAY, end - 1)) {
      let offset = this.#rawOffset(sample);
      while (offset !== current) {
        const at = this.#firstChange(known, sample, current);
        // A change exactly at the year's first second leaves nothing to push.
        if (at > segmentStart) segments.push({ start: segmentStart, end: at, offset: current, before });
        before = current;
        segmentStart = at;
        current = this.#rawOffset(at);
        known = at;
        offset = this.#rawOffset(sample);
      }
      known = sample;
      if (sample === end - 1) break;
    }
    segments.push({ start: segmentStart, end, offset: current, before });
    return { start, end, segments };
  }

  /** First second in (`from`, `to`] whose offset is not `offset`, given that `to`'s is not. */
  #firstChange(from: number, to: number, offset: number): number {
    let low = from;
    let high = to;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (this.#rawOffset(middle) === offset) low = middle;
      else high = middle;
    }
    return high;
  }

  #rawOffset(second: number): number {
    const at = clamp(second);
    const match = WALL.exec(this.#formatter.format(at * 1000));
    if (match === null) throw new Error(`cannot read the wall clock of ${this.name} at ${at}`);
    const wall =
      Date.UTC(+match[3]!, +match[1]! - 1, +match[2]!, +match[4]!, +match[5]!, +match[6]!) / 1000;
    return wall - at;
  }
}

function clamp(second: number): number {
  return Math.min(Math.max(Math.floor(second), MIN_SECOND), MAX_SECOND);
}

/**
 * Resolves IANA zone names to shared `Zone`s. A zone's transitions are facts about
 * tzdata, not state, so sharing the memo between schedules only saves work.
 */
export class ZoneCache {
  readonly #zones = new Map<string, Zone>();

  /** The zone, or undefined when `Intl` does not know the name. */
  get(name: string): Zone | undefined {
    let zone = this.#zones.get(name);
    if (zone === undefined) {
      if (!intlKnowsZone(name)) return undefined;
      if (this.#zones.size >= MAX_ZONES_KEPT) this.#zones.clear();
      zone = new Zone(name);
      this.#zones.set(name, zone);
    }
    return zone;
  }
}

/** True when `Intl` knows the zone (IANA names, `UTC`, `Etc/GMT+5`, ...). Costly: ask a `ZoneCache`. */
function intlKnowsZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz.trim() === '' || tz !== tz.trim()) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

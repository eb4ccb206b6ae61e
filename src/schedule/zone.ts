/**
 * UTC offsets of IANA time zones. Owns the only use of `Intl` in schedule maths.
 * A zone that is a fixed offset by definition (`UTC`, `Etc/GMT+5`, ...) is one segment
 * forever, read once. Any other zone's offset transitions are found once per stretch of
 * `CHUNK` seconds (about a month) that a query touches (samples a few days apart, then
 * bisection to the second where two samples differ) and kept, so the hot path is an array
 * lookup and never formats a date. A stretch, not a year: a sparse expression (a fifth
 * Friday of February) touches one stretch per tick, and a stretch costs ~14 Intl calls
 * where a year cost ~125 (cron-schedule.ts skips the stretches between ticks unread).
 *
 * All instants here are epoch SECONDS; offsets are seconds east of UTC.
 */
import { daysFromCivil } from './calendar.js';

/** A stretch of time with one UTC offset, ending at a transition or at a chunk boundary. */
export interface ZoneSegment {
  /**
   * First second of the segment: a transition, or the first second of a chunk when no
   * transition happened in the few days before it. May lie in the previous chunk.
   */
  readonly start: number;
  /** First second after the segment. */
  readonly end: number;
  /** Offset in force inside the segment. */
  readonly offset: number;
  /** Offset in force just before `start`; differs from `offset` only when `start` is a transition. */
  readonly before: number;
}

interface ChunkTable {
  readonly start: number;
  readonly end: number;
  readonly segments: readonly ZoneSegment[];
}

const DAY = 86_400;
/**
 * The zone is read in chunks of this many seconds, aligned on the epoch: 32 days, ~14 Intl
 * calls each (11 samples, the last second, and 2 before the start), plus ~19 per transition.
 */
export const CHUNK = 32 * DAY;
/**
 * No zone is further than this from UTC (tzdata's extremes are local mean times of about
 * ±15:56; ECMA-262 offset zones stop short of ±24:00). Lets cron-schedule.ts bound the
 * instants of a wall-clock time without reading the zone.
 */
export const MAX_OFFSET = DAY;
// Longer than any gap or fold (the longest are whole skipped days, e.g. Pacific/Apia 2011).
const LOOKBACK = 3 * DAY;
/**
 * Sampling step of a chunk's scan, in seconds. Two samples that agree hide any stretch
 * between them that returns to the same offset, so the step must stay below the shortest
 * such stretch: in tzdata 2025c, for every zone over 1700-2400, that is 6 days 23 hours (a
 * week of summer time in Brazil in 2000, and in Palestine's predicted 2040 rules); half of
 * it leaves room for future tzdata.
 */
export const SCAN_STEP = 3 * DAY;
// Intl output for early years carries an era, and the last year a Date holds is incomplete;
// nothing is scheduled that far out, so offsets outside [MIN_SECOND, MAX_SECOND) are those
// at the nearer edge.
const MIN_SECOND = -59_011_459_200; // 0100-01-01T00:00:00Z
const MAX_SECOND = 8_615_994_624_000; // 275000-01-01T00:00:00Z, some way inside the Date range
// Bounded so a sweep over centuries cannot grow without end (a thousand years of chunks).
const MAX_CHUNKS_KEPT = 12_000;
// Bounded for the same reason; zones are few in practice.
const MAX_ZONES_KEPT = 500;

const WALL = /^(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)/;
// Names Intl resolves to a zone of one offset forever: tzdata's Etc zones (`Etc/UTC`, `GMT`
// and `Zulu` resolve to `UTC`) and the offset zones (`+05:30`) of runtimes that accept them.
const FIXED_OFFSET_ZONE = /^(?:UTC|Etc\/GMT[+-]\d{1,2}|[+-]\d{2}(?::?\d{2})?)$/;

export class Zone {
  readonly name: string;
  readonly #formatter: Intl.DateTimeFormat;
  readonly #fixedOffset: boolean;
  readonly #chunk: number;
  /** The one segment of a fixed-offset zone, once read. */
  #forever: ZoneSegment | undefined;
  readonly #chunks = new Map<number, ChunkTable>();
  #last: ChunkTable | undefined;

  /**
   * Throws a RangeError when `Intl` does not know the zone. `chunk` (seconds) is for tests,
   * which put chunk boundaries inside gaps and folds to check that none shows.
   */
  constructor(name: string, chunk = CHUNK) {
    this.name = name;
    this.#chunk = chunk;
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
    this.#fixedOffset = FIXED_OFFSET_ZONE.test(this.#formatter.resolvedOptions().timeZone);
  }

  /** The segment containing epoch second `second`. */
  segmentAt(second: number): ZoneSegment {
    if (this.#fixedOffset) return (this.#forever ??= this.#edge(-Infinity, Infinity));
    let table = this.#last;
    if (table === undefined || second < table.start || second >= table.end) {
      if (second < MIN_SECOND) return this.#edge(-Infinity, MIN_SECOND);
      if (second >= MAX_SECOND) return this.#edge(MAX_SECOND, Infinity);
      table = this.#table(Math.floor(second / this.#chunk));
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

  /** One offset over [start, end): read at the finite end, if any. */
  #edge(start: number, end: number): ZoneSegment {
    const offset = this.#rawOffset(Number.isFinite(start) ? start : Number.isFinite(end) ? end : 0);
    return { start, end, offset, before: offset };
  }

  #table(chunk: number): ChunkTable {
    let table = this.#chunks.get(chunk);
    if (table === undefined) {
      if (this.#chunks.size >= MAX_CHUNKS_KEPT) this.#chunks.clear();
      table = this.#scanChunk(chunk * this.#chunk, (chunk + 1) * this.#chunk);
      this.#chunks.set(chunk, table);
    }
    return table;
  }

  #scanChunk(start: number, end: number): ChunkTable {
    const segments: ZoneSegment[] = [];
    let segmentStart = start;
    let before = this.#rawOffset(start - 1);
    let current = before;
    let known = start - 1; // latest second whose offset is `current`
    // Chunk boundaries are not transitions, but a gap or fold that began shortly before
    // one still shapes the wall clock after it (Pacific/Apia skipped 2011-12-30, a whole
    // day): the first segment then starts at that transition.
    const lookback = this.#rawOffset(start - LOOKBACK);
    if (lookback !== before) {
      const at = this.#firstChange(start - LOOKBACK, start - 1, lookback);
      if (this.#rawOffset(at) === before) {
        segmentStart = at;
        before = lookback;
      }
    }
    // Samples SCAN_STEP apart, then the last second of the chunk. Several transitions between two
    // samples are found one by one: each bisection finds the first change after `known`.
    for (let sample = start; ; sample = Math.min(sample + SCAN_STEP, end - 1)) {
      let offset = this.#rawOffset(sample);
      while (offset !== current) {
        const at = this.#firstChange(known, sample, current);
        // A change exactly at the chunk's first second leaves nothing to push.
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
    // Not Date.UTC, which maps years 0-99 to the 1900s: west of Greenwich, MIN_SECOND is in 99.
    const wall = daysFromCivil(+match[3]!, +match[1]!, +match[2]!) * DAY + +match[4]! * 3600 + +match[5]! * 60 + +match[6]!;
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

  /** The zone, or undefined when `Intl` does not know the name (IANA names, `UTC`, `Etc/GMT+5`, ...). */
  get(name: string): Zone | undefined {
    let zone = this.#zones.get(name);
    if (zone === undefined) {
      zone = openZone(name);
      if (zone === undefined) return undefined;
      if (this.#zones.size >= MAX_ZONES_KEPT) this.#zones.clear();
      this.#zones.set(name, zone);
    }
    return zone;
  }
}

function openZone(name: string): Zone | undefined {
  if (typeof name !== 'string' || name.trim() === '' || name !== name.trim()) return undefined;
  try {
    return new Zone(name);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

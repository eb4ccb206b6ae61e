/**
 * Zone-less cron matching: "the first wall-clock second at or after W that the
 * fields match" and "the last one at or before W". No time zone, no DST: wall-clock
 * seconds count from 1970-01-01T00:00:00 on a clock that never jumps (as if UTC).
 * `cron-schedule.ts` maps these wall-clock times to instants.
 *
 * Days are matched through precomputed month masks: which days of a month fire
 * depends only on the month's length and the weekday of its 1st, so there are just
 * 4 x 7 masks, and finding the next matching day is a bit scan.
 */

/** Parsed cron fields, normalised. Produced by `cron.ts`. */
export interface CronFields {
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** 1-12. */
  readonly months: readonly number[];
  /** 1-31. */
  readonly daysOfMonth: readonly number[];
  /** `L` in day-of-month: the month's last day. */
  readonly lastDayOfMonth: boolean;
  /** `15W`: the weekday nearest the 15th, within the month. */
  readonly nearestWeekdays: readonly number[];
  /** `LW`: the month's last weekday (Monday-Friday). */
  readonly lastWeekdayOfMonth: boolean;
  /** 0-6, Sunday = 0. */
  readonly daysOfWeek: readonly number[];
  /** `#n` on day-of-week: only the n-th such weekday of the month (1-5); 0 when absent. */
  readonly nthDayOfWeek: number;
  /** `5L`: the month's last Friday, and so on; 0-6. */
  readonly lastDaysOfWeek: readonly number[];
  /** False when the day-of-month field is `*` or `?`: classic cron then ANDs instead of ORs. */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

const DAY = 86_400;
// The Gregorian calendar repeats every 400 years: a pattern that does not match within
// 400 years never will.
const HORIZON_MONTHS = 400 * 12 + 1;

export class CronCalendar {
  readonly #monthAllowed: boolean[];
  /** Bit d-1 set when day d fires; index (length - 28) * 7 + weekday of the 1st. */
  readonly #dayMasks: Uint32Array;
  // next*[i]: smallest allowed value >= i (-1 if none); prev*[i]: largest <= i. One extra
  // slot at the top of next* holds -1 so that "i + 1" needs no bounds check.
  readonly #nextSecond: Int8Array;
  readonly #nextMinute: Int8Array;
  readonly #nextHour: Int8Array;
  readonly #prevSecond: Int8Array;
  readonly #prevMinute: Int8Array;
  readonly #prevHour: Int8Array;
  readonly #firstTime: number;
  readonly #lastTime: number;
  // Scratch for civil-date conversion, to keep the hot path free of allocations.
  #year = 0;
  #month = 0;
  #day = 0;

  constructor(fields: CronFields) {
    this.#monthAllowed = Array.from({ length: 13 }, (_, m) => fields.months.includes(m));
    this.#dayMasks = buildDayMasks(fields);
    this.#nextSecond = nextTable(fields.seconds, 60);
    this.#nextMinute = nextTable(fields.minutes, 60);
    this.#nextHour = nextTable(fields.hours, 24);
    this.#prevSecond = prevTable(fields.seconds, 60);
    this.#prevMinute = prevTable(fields.minutes, 60);
    this.#prevHour = prevTable(fields.hours, 24);
    this.#firstTime = this.#nextTime(0);
    this.#lastTime = this.#prevTime(DAY - 1);
  }

  /** True when some day of some month in a 400-year cycle fires. */
  get canFire(): boolean {
    if (this.#firstTime < 0) return false;
    for (let month = 1; month <= 12; month++) {
      if (!this.#monthAllowed[month]) continue;
      const lengths = month === 2 ? [28, 29] : [MONTH_LENGTHS[month]!];
      for (const length of lengths) {
        for (let weekday = 0; weekday < 7; weekday++) {
          if (this.#dayMasks[(length - 28) * 7 + weekday] !== 0) return true;
        }
      }
    }
    return false;
  }

  /** First matching wall-clock second >= `wall` (an integer), or undefined within 400 years. */
  next(wall: number): number | undefined {
    const dayNumber = Math.floor(wall / DAY);
    this.#civil(dayNumber);
    let year = this.#year;
    let month = this.#month;
    const day = this.#day;
    if (this.#monthAllowed[month]) {
      const mask = this.#mask(year, month);
      if ((mask >>> (day - 1)) & 1) {
        const time = this.#nextTime(wall - dayNumber * DAY);
        if (time >= 0) return dayNumber * DAY + time;
      }
      // Days after `day` in this month: bits day and up.
      const later = day >= 31 ? 0 : mask & ~((1 << day) - 1);
      if (later !== 0) return (dayNumber + lowestBit(later) + 1 - day) * DAY + this.#firstTime;
    }
    for (let step = 0; step < HORIZON_MONTHS; step++) {
      if (++month > 12) {
        month = 1;
        year++;
      }
      if (!this.#monthAllowed[month]) continue;
      const mask = this.#mask(year, month);
      if (mask !== 0) return (daysFromCivil(year, month, 1) + lowestBit(mask)) * DAY + this.#firstTime;
    }
    return undefined;
  }

  /** Last matching wall-clock second <= `wall` (an integer), or undefined within 400 years. */
  prev(wall: number): number | undefined {
    const dayNumber = Math.floor(wall / DAY);
    this.#civil(dayNumber);
    let year = this.#year;
    let month = this.#month;
    const day = this.#day;
    if (this.#monthAllowed[month]) {
      const mask = this.#mask(year, month);
      if ((mask >>> (day - 1)) & 1) {
        const time = this.#prevTime(wall - dayNumber * DAY);
        if (time >= 0) return dayNumber * DAY + time;
      }
      // Days before `day`: bits 0 .. day-2.
      const earlier = mask & ((1 << (day - 1)) - 1);
      if (earlier !== 0) return (dayNumber + highestBit(earlier) + 1 - day) * DAY + this.#lastTime;
    }
    for (let step = 0; step < HORIZON_MONTHS; step++) {
      if (--month < 1) {
        month = 12;
        year--;
      }
      if (!this.#monthAllowed[month]) continue;
      const mask = this.#mask(year, month);
      if (mask !== 0) return (daysFromCivil(year, month, 1) + highestBit(mask)) * DAY + this.#lastTime;
    }
    return undefined;
  }

  #mask(year: number, month: number): number {
    const length = month === 2 ? (isLeapYear(year) ? 29 : 28) : MONTH_LENGTHS[month]!;
    return this.#dayMasks[(length - 28) * 7 + weekdayOf(daysFromCivil(year, month, 1))]!;
  }

  /** First matching time of day (seconds) >= `time`, or -1. */
  #nextTime(time: number): number {
    const hour = Math.floor(time / 3600);
    const minute = Math.floor((time % 3600) / 60);
    const second = time % 60;
    if (this.#nextHour[hour] === hour) {
      if (this.#nextMinute[minute] === minute) {
        const s = this.#nextSecond[second]!;
        if (s >= 0) return hour * 3600 + minute * 60 + s;
      }
      const m = this.#nextMinute[minute + 1]!;
      if (m >= 0) return hour * 3600 + m * 60 + this.#nextSecond[0]!;
    }
    const h = this.#nextHour[hour + 1]!;
    return h >= 0 ? h * 3600 + this.#nextMinute[0]! * 60 + this.#nextSecond[0]! : -1;
  }

  /** Last matching time of day (seconds) <= `time`, or -1. */
  #prevTime(time: number): number {
    const hour = Math.floor(time / 3600);
    const minute = Math.floor((time % 3600) / 60);
    const second = time % 60;
    if (this.#prevHour[hour] === hour) {
      if (this.#prevMinute[minute] === minute) {
        const s = this.#prevSecond[second]!;
        if (s >= 0) return hour * 3600 + minute * 60 + s;
      }
      const m = minute > 0 ? this.#prevMinute[minute - 1]! : -1;
      if (m >= 0) return hour * 3600 + m * 60 + this.#prevSecond[59]!;
    }
    const h = hour > 0 ? this.#prevHour[hour - 1]! : -1;
    return h >= 0 ? h * 3600 + this.#prevMinute[59]! * 60 + this.#prevSecond[59]! : -1;
  }

  #civil(dayNumber: number): void {
    // Howard Hinnant's civil_from_days.
    const z = dayNumber + 719_468;
    const era = Math.floor(z / 146_097);
    const doe = z - era * 146_097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    this.#day = doy - Math.floor((153 * mp + 2) / 5) + 1;
    this.#month = mp < 10 ? mp + 3 : mp - 9;
    this.#year = yoe + era * 400 + (this.#month <= 2 ? 1 : 0);
  }
}

const MONTH_LENGTHS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** 0 = Sunday; 1970-01-01 was a Thursday. */
function weekdayOf(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function lowestBit(mask: number): number {
  return 31 - Math.clz32(mask & -mask);
}

function highestBit(mask: number): number {
  return 31 - Math.clz32(mask);
}

function nextTable(values: readonly number[], size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  for (let i = size - 1; i >= 0; i--) table[i] = values.includes(i) ? i : table[i + 1]!;
  return table;
}

function prevTable(values: readonly number[], size: number): Int8Array {
  const table = new Int8Array(size).fill(-1);
  for (let i = 0; i < size; i++) table[i] = values.includes(i) ? i : i > 0 ? table[i - 1]! : -1;
  return table;
}

function buildDayMasks(fields: CronFields): Uint32Array {
  const masks = new Uint32Array(4 * 7);
  for (let length = 28; length <= 31; length++) {
    for (let first = 0; first < 7; first++) {
      let mask = 0;
      for (let day = 1; day <= length; day++) {
        if (dayMatches(fields, day, length, first)) mask |= 1 << (day - 1);
      }
      masks[(length - 28) * 7 + first] = mask >>> 0;
    }
  }
  return masks;
}

function dayMatches(fields: CronFields, day: number, length: number, first: number): boolean {
  const weekday = (first + day - 1) % 7;
  const byMonthDay =
    fields.daysOfMonth.includes(day) ||
    (fields.lastDayOfMonth && day === length) ||
    (fields.lastWeekdayOfMonth && day === lastWeekday(length, first)) ||
    fields.nearestWeekdays.some((target) => nearestWeekday(target, length, first) === day);
  const byWeekDay =
    (fields.daysOfWeek.includes(weekday) &&
      (fields.nthDayOfWeek === 0 || Math.ceil(day / 7) === fields.nthDayOfWeek)) ||
    (fields.lastDaysOfWeek.includes(weekday) && day + 7 > length);
  if (fields.dayOfMonthRestricted && fields.dayOfWeekRestricted) return byMonthDay || byWeekDay;
  if (fields.dayOfMonthRestricted) return byMonthDay;
  if (fields.dayOfWeekRestricted) return byWeekDay;
  return true;
}

/** The Monday-Friday day nearest `target` without leaving the month; -1 when the month is too short. */
function nearestWeekday(target: number, length: number, first: number): number {
  if (target > length) return -1;
  const weekday = (first + target - 1) % 7;
  if (weekday === 6) return target === 1 ? 3 : target - 1; // Saturday
  if (weekday === 0) return target === length ? target - 2 : target + 1; // Sunday
  return target;
}

function lastWeekday(length: number, first: number): number {
  const weekday = (first + length - 1) % 7;
  return weekday === 6 ? length - 1 : weekday === 0 ? length - 2 : length;
}

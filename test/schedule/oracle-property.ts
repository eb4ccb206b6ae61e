/**
 * The property shared by the oracle test files: for random 5-field expressions, zones
 * and reference instants (mostly near a DST transition of a random year 1970-2100),
 * `next` and `latest` equal the brute-force oracle and agree with each other.
 */
import fc from 'fast-check';
import { compileSchedule, cronProblem } from '../../src/schedule/index.js';
import { oracleTicks, transitionsIn, WallReader } from './oracle.js';

const DAY = 86_400;
const WALK = 1.75 * DAY; // oracle walks centre ± WALK
const TRUST = 0.75 * DAY; // and is trusted within centre ± TRUST (a day inside the walk)

export const ORACLE_ZONES = [
  'Australia/Lord_Howe', 'America/Santiago', 'Pacific/Chatham', 'Asia/Kolkata', 'Europe/Dublin',
  'America/New_York', 'Europe/London', 'Europe/Berlin', 'Australia/Sydney', 'Pacific/Auckland',
  'America/Havana', 'Asia/Tehran', 'America/St_Johns', 'Africa/Casablanca', 'Pacific/Apia',
  'America/Sao_Paulo', 'Asia/Gaza', 'Asia/Beirut', 'Antarctica/Troll', 'UTC', 'Asia/Tokyo',
  'America/Los_Angeles', 'America/Asuncion', 'Asia/Jerusalem', 'Europe/Moscow', 'Asia/Kathmandu',
  'America/Caracas', 'Australia/Adelaide', 'Pacific/Kiritimati', 'Pacific/Kwajalein', 'America/Nuuk',
  'Asia/Dhaka', 'Africa/Cairo', 'America/Mexico_City', 'Asia/Amman', 'Pacific/Norfolk',
  'America/Scoresbysund', 'Europe/Lisbon', 'Atlantic/Azores', 'Pacific/Fiji', 'Asia/Colombo',
  'America/Metlakatla',
] as const;

export interface OracleStats {
  cases: number;
  exact: number; // queries whose answer the oracle pinned exactly (next and latest counted apart)
  bounded: number; // queries whose answer lies outside the trusted window (only bounded)
}

const yearsWithTransitions = new Map<string, number[]>();

function transitionsOf(zone: string, reader: WallReader, year: number): number[] {
  const key = `${zone} ${year}`;
  let found = yearsWithTransitions.get(key);
  if (found === undefined) {
    found = transitionsIn(reader, year);
    yearsWithTransitions.set(key, found);
  }
  return found;
}

const pick = <T>(values: readonly T[], index: number): T => values[index % values.length]!;

/** Abstract field choices, resolved against the transition's wall clock in the property. */
const fieldChoices = fc.record({
  minuteKind: fc.nat(12),
  hourKind: fc.nat(13),
  dayKind: fc.nat(14),
  monthKind: fc.nat(10),
  weekdayKind: fc.nat(13),
  numbers: fc.array(fc.nat(1_000), { minLength: 8, maxLength: 8 }),
});

type Choices = typeof fieldChoices extends fc.Arbitrary<infer T> ? T : never;

function buildExpression(c: Choices, wallNear: number): string {
  const near = new Date(wallNear * 1000);
  const n = c.numbers;
  const h0 = near.getUTCHours();
  const m0 = near.getUTCMinutes();
  const minute = [
    '*',
    `*/${pick([5, 10, 15, 20, 30, 7, 45], n[0]!)}`,
    `*/${pick([15, 30], n[0]!)}`,
    String((m0 + 15 * (n[1]! % 4)) % 60),
    String(m0),
    String(n[1]! % 60),
    `${n[1]! % 60},${(n[2]! + 30) % 60}`,
    `${m0},${(m0 + 30) % 60}`,
    `${n[1]! % 30}-${30 + (n[2]! % 30)}`,
    `${n[1]! % 20}-${40 + (n[2]! % 20)}/${1 + (n[3]! % 15)}`,
    `${n[1]! % 15}/${5 + (n[3]! % 20)}`,
    '0',
    '30',
  ][c.minuteKind]!;
  const hour = [
    '*',
    '*',
    '*',
    `*/${pick([2, 3, 4, 6], n[4]!)}`,
    `*/${pick([2, 3], n[4]!)}`,
    String(h0),
    String(h0),
    String((h0 + 23) % 24),
    String((h0 + 1) % 24),
    `${h0},${(h0 + 1) % 24}`,
    `${Math.max(h0 - 1, 0)}-${Math.min(h0 + 1, 23)}`,
    `${n[4]! % 4}-${20 + (n[5]! % 4)}/${2 + (n[5]! % 3)}`,
    String(n[4]! % 24),
    `${h0},${n[4]! % 24}`,
  ][c.hourKind]!;
  const dayOfMonth = near.getUTCDate();
  const day = c.dayKind < 9 ? '*' : [
    String(dayOfMonth),
    `${Math.max(dayOfMonth - 1, 1)}-${Math.min(dayOfMonth + 2, 31)}`,
    `${dayOfMonth},${1 + (n[6]! % 31)}`,
    '*/2',
    String(1 + (n[6]! % 31)),
    '31',
  ][c.dayKind - 9]!;
  const monthOfYear = near.getUTCMonth() + 1;
  const month = c.monthKind < 7 ? '*' : [
    String(monthOfYear),
    `${Math.max(monthOfYear - 1, 1)}-${monthOfYear}`,
    `${monthOfYear},${1 + (n[7]! % 12)}`,
    '2',
  ][c.monthKind - 7]!;
  const weekday = c.weekdayKind < 8 ? '*' : [
    String(near.getUTCDay()),
    '1-5',
    '0,6',
    '*/2',
    String(near.getUTCDay() === 0 ? 7 : near.getUTCDay()),
    String(n[7]! % 7),
  ][c.weekdayKind - 8]!;
  return `${minute} ${hour} ${day} ${month} ${weekday}`;
}

/** Checks `zone` with `runs` random cases; returns counts so callers can assert coverage. */
export function checkZoneAgainstOracle(zone: string, runs: number, seed: number): OracleStats {
  const reader = new WallReader(zone);
  const stats: OracleStats = { cases: 0, exact: 0, bounded: 0 };
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1970, max: 2100 }), { minLength: 2, maxLength: 2 }),
      fc.nat(50),
      fc.integer({ min: -6 * 3600, max: 6 * 3600 }),
      fc.boolean(),
      fieldChoices,
      fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 12, maxLength: 12 }),
      fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
      (years, transitionIndex, shift, preferAfter, choices, fractions, tickPicks) => {
        // Bias towards transitions: the first candidate year that has one.
        let centre: number | undefined;
        let wallNear: number | undefined;
        for (const year of years) {
          const transitions = transitionsOf(zone, reader, year);
          if (transitions.length === 0) continue;
          const at = pick(transitions, transitionIndex);
          centre = at + shift;
          wallNear = preferAfter ? reader.wallAt(at) : reader.wallAt(at - 1) + 1;
          break;
        }
        if (centre === undefined || wallNear === undefined) {
          centre = Date.UTC(years[0]!, 0, 1) / 1000 + (transitionIndex / 50) * 365 * DAY + shift;
          wallNear = reader.wallAt(centre);
        }
        const expression = buildExpression(choices, wallNear);
        // A few generated day/month combinations never fire (31 February); those are invalid.
        fc.pre(cronProblem(expression) === undefined);
        stats.cases++;
        const queries = fractions.map((f) => Math.round(centre! * 1000 + f * TRUST * 1000));
        checkAround(reader, zone, expression, centre, queries, tickPicks, stats);
      },
    ),
    { numRuns: runs, seed, endOnFailure: true },
  );
  return stats;
}

/**
 * Compares next/latest with the oracle for `queries` (epoch ms) around `centre` (epoch
 * s), plus each tick picked by `tickPicks` and a millisecond either side of it.
 */
export function checkAround(
  reader: WallReader,
  zone: string,
  expression: string,
  centre: number,
  queries: number[],
  tickPicks: readonly number[],
  stats: OracleStats,
): void {
  const ticks = oracleTicks(reader, expression, centre - WALK, centre + WALK).map((t) => t * 1000);
  const schedule = compileSchedule({ kind: 'cron', expression }, zone, 0);
  const low = (centre - TRUST) * 1000;
  const high = (centre + TRUST) * 1000;
  const trusted = ticks.filter((t) => t >= low && t <= high);
  const all = [...queries];
  for (const p of tickPicks) {
    if (trusted.length === 0) break;
    const tick = trusted[p % trusted.length]!;
    all.push(tick, tick - 1, tick + 1);
  }
  // Plain comparisons: tens of thousands of checks per test, where expect() would dominate.
  const same = (actual: number | undefined, expected: number | undefined, what: string, q: number) => {
    if (actual !== expected) {
      throw new Error(
        `${what}: ${zone} "${expression}" q=${new Date(q).toISOString()}: got ${show(actual)}, expected ${show(expected)}`,
      );
    }
  };
  for (const q of all) {
    const next = schedule.next(q);
    const latest = schedule.latest(q);
    const expectedNext = ticks.find((t) => t > q);
    if (expectedNext !== undefined && expectedNext <= high) {
      same(next, expectedNext, 'next', q);
      stats.exact++;
    } else {
      if (next !== undefined && next <= high) same(next, undefined, 'next beyond the window', q);
      stats.bounded++;
    }
    const expectedLatest = ticks.findLast((t) => t <= q);
    if (expectedLatest !== undefined && expectedLatest >= low) {
      same(latest, expectedLatest, 'latest', q);
      stats.exact++;
    } else {
      if (latest !== undefined && latest >= low) same(latest, undefined, 'latest before the window', q);
      stats.bounded++;
    }
    // The two describe one tick set.
    if (next !== undefined) {
      same(schedule.latest(next), next, 'latest(next)', q);
      same(schedule.latest(next - 1), latest, 'latest(next - 1)', q);
    }
    if (latest !== undefined) same(schedule.next(latest), next, 'next(latest)', q);
  }
}

function show(t: number | undefined): string {
  return t === undefined ? 'undefined' : new Date(t).toISOString();
}

/** Transitions known to be odd: skipped days, year-boundary gaps, half-hour and two-hour shifts, midnight changes. */
export const NOTABLE_YEARS: readonly (readonly [string, number])[] = [
  ['Pacific/Kiritimati', 1994], ['Pacific/Apia', 2011], ['Pacific/Kwajalein', 1993], ['Antarctica/Troll', 2026],
  ['America/Santiago', 2026], ['America/Santiago', 2022], ['Australia/Lord_Howe', 2026], ['Pacific/Chatham', 2026],
  ['America/Havana', 2026], ['Africa/Casablanca', 2026], ['Europe/London', 1971], ['Europe/Dublin', 1971],
  ['America/Caracas', 2007], ['America/Caracas', 2016], ['Asia/Pyongyang', 2015], ['Asia/Pyongyang', 2018],
  ['Europe/Moscow', 2011], ['Europe/Moscow', 2014], ['America/Metlakatla', 2019], ['Asia/Tehran', 2022],
  ['America/Sao_Paulo', 2018], ['Asia/Dhaka', 2009], ['Asia/Colombo', 1996], ['America/Nuuk', 2023],
  ['Asia/Gaza', 2026], ['Asia/Beirut', 2026], ['America/St_Johns', 2026], ['Pacific/Norfolk', 2019],
];

/** Expressions aimed at the wall-clock hours and minutes around a transition. */
export function notableExpressions(reader: WallReader, transition: number): string[] {
  const before = new Date((reader.wallAt(transition - 1) + 1) * 1000);
  const after = new Date(reader.wallAt(transition) * 1000);
  const hb = before.getUTCHours();
  const mb = before.getUTCMinutes();
  const ha = after.getUTCHours();
  const ma = after.getUTCMinutes();
  return [
    '*/15 * * * *',
    '0 * * * *',
    '30 * * * *',
    '0 0 * * *',
    '59 23 * * *',
    `${mb} ${hb} * * *`,
    `${(mb + 30) % 60} ${hb} * * *`,
    `${ma} ${ha} * * *`,
    `${(ma + 15) % 60} ${[...new Set([ha, hb])].join(',')} * * *`,
    `*/20 ${(hb + 23) % 24},${hb},${(hb + 1) % 24} * * *`,
  ];
}

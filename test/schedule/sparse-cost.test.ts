/**
 * What a sparse expression costs in tzdata reads, counted (not timed), in every zone Intl
 * knows: the walk reads the zone near each tick only, one 32-day chunk (~14 Intl calls,
 * ~19 more per transition in it) instead of every UTC year in between (~125 calls a year;
 * 10 ticks of `0 0 * 2 5#5` in America/New_York took 42,735 calls, ~100-210 ms cold).
 */
import { describe, expect, it, vi } from 'vitest';
import { parseCron } from '../../src/schedule/cron.js';
import { CronSchedule } from '../../src/schedule/cron-schedule.js';
import { Zone } from '../../src/schedule/zone.js';

/** The number of `Intl.DateTimeFormat` format() calls `run` makes. */
function intlCalls(run: () => void): number {
  const prototype = Intl.DateTimeFormat.prototype as unknown as { readonly format: unknown };
  const spy = vi.spyOn(prototype, 'format', 'get');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

const FROM = Date.UTC(2026, 0, 1);
const ZONES = Intl.supportedValuesOf('timeZone');

describe.each([
  '0 0 * 2 5#5', // a fifth Friday of February: ten ticks span ~250 years
  '0 0 29 2 *',
  '0 0 1 1 5#1', // ticks next to a chunk boundary of the UTC year
  '0 12 L 2 *',
])('%s, in each of the zones Intl knows', (expression) => {
  const parsed = parseCron(expression);
  if (!('cron' in parsed)) throw new Error(parsed.problem);
  const cron = parsed.cron;

  it('10 ticks with next() read at most 2 chunks a tick, transitions included (≤ 400 Intl calls)', () => {
    const costs = ZONES.map((name) => {
      const schedule = new CronSchedule(cron, new Zone(name));
      return {
        name,
        calls: intlCalls(() => {
          let t = FROM;
          for (let i = 0; i < 10; i++) t = schedule.next(t)!;
        }),
      };
    });
    const worst = costs.reduce((a, b) => (b.calls > a.calls ? b : a));
    expect(worst.calls, `worst zone: ${worst.name}`).toBeLessThanOrEqual(400);
  });

  it('latest() reads the chunks near its tick only (≤ 60 Intl calls)', () => {
    const worst = Math.max(...ZONES.map((name) => intlCalls(() => new CronSchedule(cron, new Zone(name)).latest(FROM))));
    expect(worst).toBeLessThanOrEqual(60);
  });
});

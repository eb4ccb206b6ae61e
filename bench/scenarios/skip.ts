/**
 * Skip: a job whose cursor is 30 million minutes behind (57 years).
 * 1. `plan()` timed directly (pure; cold first call and warm mean/p99 over repeated calls), Allow and Forbid.
 * 2. A restarted scheduler on the memory store with a FakeClock jumped 30 M minutes:
 *    time from `start()` to the first handler call.
 * `plan()` and `compileSchedule()` are not exported: part 1 times them from the source; part 2
 * runs the built package.
 */
import { plan } from '../../src/planner.js';
import { compileSchedule } from '../../src/schedule/index.js';
import type { ConcurrencyPolicy } from '../../src/index.js';
import { arg, percentile, report } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const MINUTES = Number(arg('minutes', '30000000'));
const REPEAT = Number(arg('repeat', '10000'));
const T0 = Date.parse('2000-01-01T00:00:00Z');

function timePlan(policy: ConcurrencyPolicy, timezone: string) {
  const schedule = compileSchedule({ kind: 'cron', expression: '* * * * *' }, timezone, 0);
  const cursor = T0;
  const now = T0 + MINUTES * 60_000 + 30_000;
  const c0 = performance.now();
  const first = plan({ schedule, policy, cursor, now });
  const coldMs = performance.now() - c0; // first call on this schedule object
  if (first.kind !== 'run' || first.missed === undefined) throw new Error(`unexpected plan ${JSON.stringify(first)}`);
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i += 1) {
    // A different `now` each time, so nothing can be memoized between calls.
    const t = performance.now();
    plan({ schedule, policy, cursor: cursor + (i % 60) * 1000, now: now + i * 60_000 });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { policy, timezone, coldMs, meanMs: times.reduce((a, b) => a + b, 0) / times.length, p99Ms: percentile(times, 99), missedTo: new Date(first.missed.to).toISOString() };
}

/**
 * The first query in a UTC year no schedule has touched builds that year's zone table
 * (src/schedule/zone.ts): its cost is per year, not per missed tick. A 3-minute gap in a
 * fresh year versus a 30 M-minute gap ending in a year already touched.
 */
function years() {
  const time = (cursor: number, now: number): number => {
    const schedule = compileSchedule({ kind: 'cron', expression: '* * * * *' }, 'UTC', 0);
    const t = performance.now();
    plan({ schedule, policy: 'Allow', cursor, now });
    return performance.now() - t;
  };
  const y2085 = Date.parse('2085-03-01T00:00:00Z');
  const coldYearShortGapMs = time(y2085, y2085 + 210_000);
  // 2000 and 2057 were touched by the calls above.
  const warmYearLongGapMs = time(T0, T0 + MINUTES * 60_000 + 30_000);
  return { coldYearShortGapMs, warmYearLongGapMs };
}

async function restart(policy: ConcurrencyPolicy) {
  const [{ Scheduler, MemoryStore }, { FakeClock }] = await Promise.all([load('tickwork'), load('tickwork/testing')]);
  const clock = new FakeClock(T0);
  const store = new MemoryStore();
  const noop = (): void => undefined;
  const first = new Scheduler({ store, clock });
  first.register({ name: 'minutely', schedule: '* * * * *', concurrencyPolicy: policy, handler: noop });
  await first.start();
  await first.stop();
  await clock.set(T0 + MINUTES * 60_000 + 30_000);
  let started: (tick: number) => void = noop;
  const firstRun = new Promise<number>((resolve) => (started = resolve));
  const second = new Scheduler({ store, clock });
  second.register({ name: 'minutely', schedule: '* * * * *', concurrencyPolicy: policy, handler: ({ scheduledAt }) => started(scheduledAt.getTime()) });
  const t0 = performance.now();
  await second.start();
  const tick = await firstRun;
  const ms = performance.now() - t0;
  await second.stop();
  return { policy, startToFirstRunMs: ms, tick: new Date(tick).toISOString() };
}

/** The first plan() calls of the process pay for warm-up (JIT, Intl zone data): shown with a 3-minute gap, so it is not blamed on the 30 M minutes. */
function firstCallEver(): number {
  let total = 0;
  // Both zones, and a 3-minute gap, so the coalesced-range code path and each zone are warm before the 30 M-minute calls.
  for (const timezone of ['UTC', 'America/New_York']) {
    const schedule = compileSchedule({ kind: 'cron', expression: '* * * * *' }, timezone, 0);
    const t = performance.now();
    plan({ schedule, policy: 'Allow', cursor: T0, now: T0 + 210_000 });
    total += performance.now() - t;
  }
  return total;
}

async function main(): Promise<void> {
  const warmUpMs = firstCallEver();
  const plans = [timePlan('Allow', 'UTC'), timePlan('Forbid', 'UTC'), timePlan('Allow', 'America/New_York'), timePlan('Forbid', 'America/New_York')];
  await restart('Allow'); // warm-up
  const yearCosts = years();
  const restarts = [await restart('Allow'), await restart('Forbid')];
  report({ minutes: MINUTES, warmUpMs, plans, years: yearCosts, restarts });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

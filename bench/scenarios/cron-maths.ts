/**
 * Cron maths: the next `--count` occurrences of each pattern in America/New_York, from a fixed
 * start, with tickwork's compileSchedule().next, croner nextRun, node-cron getNextRuns (its only
 * API for future runs: counts from the current time) and raw cron-parser next().
 * Each library is warmed up, then timed `--reps` times (once when a rep takes over 5 s); the best rep is reported.
 * Then tickwork's `latest(t)` (the catch-up look-up, which must not enumerate missed ticks): microseconds
 * per call for cron jobs whose previous tick is a minute to two years back, and for an interval job
 * 30 million periods after its anchor (moved here from a timed unit test).
 */
import { CronExpressionParser } from 'cron-parser';
import { Cron } from 'croner';
import cron from 'node-cron';
import { compileSchedule } from '../../src/schedule/index.js';
import { arg, report } from '../lib/stats.js';

const COUNT = Number(arg('count', '100000'));
const REPS = Number(arg('reps', '3'));
const TZ = 'America/New_York';
const START = Date.parse('2026-01-01T00:00:00Z');
const PATTERNS = ['*/5 * * * * *', '0 9 * * 1-5'];

type Impl = (pattern: string, count: number) => number;

const impls: Record<string, Impl> = {
  tickwork(pattern, count) {
    const schedule = compileSchedule({ kind: 'cron', expression: pattern }, TZ, 0);
    let t = START;
    for (let i = 0; i < count; i += 1) t = schedule.next(t) as number;
    return t;
  },
  croner(pattern, count) {
    const job = new Cron(pattern, { timezone: TZ, paused: true });
    let d: Date | null = new Date(START);
    for (let i = 0; i < count; i += 1) d = job.nextRun(d as Date);
    job.stop();
    return (d as Date).getTime();
  },
  'node-cron'(pattern, count) {
    const task = cron.createTask(pattern, () => undefined, { timezone: TZ });
    const runs = task.getNextRuns(count);
    void task.destroy();
    return (runs[runs.length - 1] as Date).getTime();
  },
  'cron-parser'(pattern, count) {
    const it = CronExpressionParser.parse(pattern, { currentDate: new Date(START), tz: TZ });
    let t = 0;
    for (let i = 0; i < count; i += 1) t = it.next().getTime();
    return t;
  },
};

/** Microseconds per `latest(t)` call, best of `REPS`, for schedules whose previous tick is far back. */
function timeLatest(): { schedule: string; microsPerCall: number }[] {
  const now = Date.parse('2026-03-08T12:00:00Z');
  const cases: [string, ReturnType<typeof compileSchedule>][] = [
    ['* * * * * America/New_York', compileSchedule({ kind: 'cron', expression: '* * * * *' }, 'America/New_York', 0)],
    ['0 9 * * 1-5 America/New_York', compileSchedule({ kind: 'cron', expression: '0 9 * * 1-5' }, 'America/New_York', 0)],
    ['0 0 29 2 * Australia/Lord_Howe', compileSchedule({ kind: 'cron', expression: '0 0 29 2 *' }, 'Australia/Lord_Howe', 0)],
    ['every 1 min, 30 million periods in', compileSchedule({ kind: 'every', everyMs: 60_000, anchor: now - 30_000_000 * 60_000 }, 'UTC', 0)],
  ];
  const calls = 20_000;
  return cases.map(([schedule, compiled]) => {
    compiled.latest(now); // warm the zone's tables for these years
    let best = Infinity;
    for (let r = 0; r < REPS; r += 1) {
      const t0 = performance.now();
      for (let i = 0; i < calls; i += 1) compiled.latest(now + i * 1_000);
      best = Math.min(best, performance.now() - t0);
    }
    process.stderr.write(`tickwork latest ${schedule}: ${((best * 1000) / calls).toFixed(2)} µs/call\n`);
    return { schedule, microsPerCall: (best * 1000) / calls };
  });
}

function main(): void {
  const results: { lib: string; pattern: string; opsPerSecond: number; bestMs: number; last: string }[] = [];
  for (const pattern of PATTERNS) {
    for (const [lib, impl] of Object.entries(impls)) {
      impl(pattern, Math.min(COUNT, 2000)); // warm-up
      let best = Infinity;
      let last = 0;
      for (let r = 0; r < REPS; r += 1) {
        const t0 = performance.now();
        last = impl(pattern, COUNT);
        best = Math.min(best, performance.now() - t0);
        if (best > 5000) break; // a slow peer: one long rep is already a stable figure
      }
      results.push({ lib, pattern, opsPerSecond: COUNT / (best / 1000), bestMs: best, last: new Date(last).toISOString() });
      process.stderr.write(`${lib} ${pattern}: ${(COUNT / (best / 1000)).toFixed(0)} ops/s\n`);
    }
  }
  report({ count: COUNT, timezone: TZ, results, latest: timeLatest() });
  setTimeout(() => process.exit(0), 100).unref();
}

main();

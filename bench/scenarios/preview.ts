/**
 * Schedule preview: `nextTicks(expression, { timezone, after: 2026-01-01T00:00Z, count: 10 })`
 * from the built package, in a fresh process per measurement.
 *
 * --mode first: the first call of the process (Intl's and cron-parser's one-time start-up included).
 * --mode cold:  the first call for this expression and zone, after one preview of another
 *               expression in another zone (`0 12 * * *`, Asia/Tokyo): a running app's first preview.
 *               Then warm: the median of 200 more calls.
 * --mode zones: the cold call in each zone Intl knows, one after the other (expression parsed once).
 * Intl.DateTimeFormat format() calls are counted for every measured call; time is wall time and
 * this process's CPU time (the latter holds on a loaded machine, where a call may wait for a core).
 */
import { load } from '../lib/tickwork.js';
import { arg, report } from '../lib/stats.js';

const MODE = arg('mode', 'cold');
const EXPRESSION = arg('expression', '0 0 * 2 5#5');
const ZONE = arg('zone', 'America/New_York');
const AFTER = '2026-01-01T00:00:00Z';

let intlCalls = 0;
const prototype = Intl.DateTimeFormat.prototype;
const format = Object.getOwnPropertyDescriptor(prototype, 'format')!;
Object.defineProperty(prototype, 'format', {
  configurable: true,
  get(this: Intl.DateTimeFormat) {
    intlCalls += 1;
    return format.get!.call(this) as unknown;
  },
});

/** Wall time, and this process's CPU time (what the call costs, whatever else the machine runs). */
function measure(run: () => unknown): { ms: number; cpuMs: number; intlCalls: number } {
  const calls = intlCalls;
  const cpu = process.cpuUsage();
  const start = performance.now();
  run();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, intlCalls: intlCalls - calls };
}

async function main(): Promise<void> {
  const { nextTicks } = await load('tickwork');
  const preview = (expression: string, timezone: string) => nextTicks(expression, { timezone, after: AFTER, count: 10 });
  if (MODE === 'first') {
    report({ mode: MODE, expression: EXPRESSION, zone: ZONE, ...measure(() => preview(EXPRESSION, ZONE)) });
  } else if (MODE === 'cold') {
    preview('0 12 * * *', 'Asia/Tokyo');
    const cold = measure(() => preview(EXPRESSION, ZONE));
    const warm: number[] = [];
    for (let i = 0; i < 200; i++) warm.push(measure(() => preview(EXPRESSION, ZONE)).ms);
    warm.sort((a, b) => a - b);
    const last = preview(EXPRESSION, ZONE).at(-1)?.toISOString();
    report({ mode: MODE, expression: EXPRESSION, zone: ZONE, ms: cold.ms, cpuMs: cold.cpuMs, intlCalls: cold.intlCalls, warmMs: warm[100], last });
  } else {
    preview('0 12 * * *', 'Asia/Tokyo');
    preview(EXPRESSION, 'UTC');
    const zones = Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC' && zone !== 'Asia/Tokyo');
    const costs = zones.map((zone) => ({ zone, ...measure(() => preview(EXPRESSION, zone)) }));
    const byTime = [...costs].sort((a, b) => a.ms - b.ms);
    const byCpu = [...costs].sort((a, b) => a.cpuMs - b.cpuMs);
    const byCalls = [...costs].sort((a, b) => a.intlCalls - b.intlCalls);
    report({
      mode: MODE,
      expression: EXPRESSION,
      zones: zones.length,
      medianMs: byTime[Math.floor(byTime.length / 2)]!.ms,
      maxMs: byTime.at(-1)!.ms,
      slowestZone: byTime.at(-1)!.zone,
      p99CpuMs: byCpu[Math.floor(byCpu.length * 0.99)]!.cpuMs,
      maxCpuMs: byCpu.at(-1)!.cpuMs,
      mostCpuZone: byCpu.at(-1)!.zone,
      maxIntlCalls: byCalls.at(-1)!.intlCalls,
      mostCallsZone: byCalls.at(-1)!.zone,
    });
  }
  setTimeout(() => process.exit(0), 50).unref();
}

void main();

/**
 * Idle: `--jobs` registered yearly jobs, then `--seconds` of idling.
 * Registration time = the register() calls + start() (tickwork), the constructor calls (croner), schedule() (node-cron).
 * CPU while idle from process.cpuUsage(), after settling (V8's one-off memory-reducer GCs, reported
 * apart): at least `--settle` seconds, and until a full GC has run and `--quiet` seconds have passed
 * without another, at most `--settle-max` seconds. Heap and RSS per job after GC.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { arg, cpuMs, memory, report, sleep } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const lib = arg('lib', 'tickwork');
const jobs = Number(arg('jobs', '100000'));
const seconds = Number(arg('seconds', '20'));
const settleSeconds = Number(arg('settle', '20'));
const quietSeconds = Number(arg('quiet', '10'));
const settleMaxSeconds = Number(arg('settle-max', '90'));

/** When the last full (mark-compact) GC of this isolate started, by `performance.now()`. */
let lastFullGcAt = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) lastFullGcAt = Math.max(lastFullGcAt, entry.startTime);
  }
}).observe({ entryTypes: ['gc'] });
const YEARLY = '0 0 1 1 *';

async function main(): Promise<void> {
  const noop = (): void => undefined;
  let stop: () => Promise<void> | void;
  // Load the library before the baseline so its code is not counted per job.
  const { Scheduler } = await load('tickwork');
  const { Cron } = await import('croner');
  const cron = (await import('node-cron')).default;
  const before = memory();
  const t0 = performance.now();
  if (lib === 'tickwork') {
    const scheduler = new Scheduler();
    for (let i = 0; i < jobs; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: YEARLY, handler: noop });
    await scheduler.start();
    stop = () => scheduler.stop();
  } else if (lib === 'croner') {
    const crons: InstanceType<typeof Cron>[] = [];
    for (let i = 0; i < jobs; i += 1) crons.push(new Cron(YEARLY, noop));
    stop = () => crons.forEach((c) => c.stop());
  } else if (lib === 'node-cron') {
    const tasks: ReturnType<typeof cron.schedule>[] = [];
    for (let i = 0; i < jobs; i += 1) tasks.push(cron.schedule(YEARLY, noop));
    stop = async () => {
      for (const t of tasks) await t.destroy();
    };
  } else throw new Error(`unknown --lib ${lib}`);
  const registerMs = performance.now() - t0;
  await sleep(1000); // let start-up work settle before measuring idle
  const after = memory();
  // Settling: after a burst of allocation V8's memory reducer runs full GCs of the whole heap, once
  // or a few times (about 250 ms of CPU each for tickwork's heap), 8 to 50 s later depending on the
  // machine's load. It is a cost of registering, not of idling: it is measured and reported apart,
  // and the window starts once one has run and none has for `quiet` seconds.
  const s0 = cpuMs();
  const settleStart = performance.now();
  await sleep(settleSeconds * 1000);
  const settling = (): boolean => lastFullGcAt < settleStart || performance.now() - lastFullGcAt < quietSeconds * 1000;
  while (performance.now() - settleStart < settleMaxSeconds * 1000 && settling()) await sleep(1000);
  const settledMs = performance.now() - settleStart;
  const settleCpuPct = ((cpuMs() - s0) / settledMs) * 100;
  const c0 = cpuMs();
  const w0 = performance.now();
  // Per-second slices too: they tell periodic work (heartbeats, GC) from a steady cost.
  const slices: number[] = [];
  let last = c0;
  for (let s = 0; s < seconds; s += 1) {
    await sleep(1000);
    const c = cpuMs();
    slices.push(((c - last) / 1000) * 100);
    last = c;
  }
  const idleCpuPct = ((cpuMs() - c0) / (performance.now() - w0)) * 100;
  const end = memory();
  await stop();
  report({
    lib,
    jobs,
    registerMs,
    idleCpuPct,
    settleCpuPct,
    settleSeconds: settledMs / 1000,
    heapPerJob: (after.heapUsed - before.heapUsed) / jobs,
    rssPerJob: (after.rss - before.rss) / jobs,
    heapGrowthWhileIdle: end.heapUsed - after.heapUsed,
    cpuSlicesPct: slices,
  });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

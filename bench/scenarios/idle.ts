/**
 * Idle: `--jobs` registered yearly jobs, then `--seconds` of idling.
 * Registration time = the register() calls + start() (tickwork), the constructor calls (croner), schedule() (node-cron).
 * CPU while idle from process.cpuUsage(), after `--settle` seconds (V8's one-off memory-reducer GCs,
 * reported apart); heap and RSS per job after GC.
 */
import { arg, cpuMs, memory, report, sleep } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const lib = arg('lib', 'tickwork');
const jobs = Number(arg('jobs', '100000'));
const seconds = Number(arg('seconds', '20'));
const settleSeconds = Number(arg('settle', '20'));
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
  // Settling: after a burst of allocation V8's memory reducer runs full GCs of the whole heap
  // (here ~8 and ~15 s after the last one: about 250 ms of CPU for tickwork's 70 MB), once. It is a
  // cost of registering, not of idling: it is measured and reported apart, and the window starts after it.
  const s0 = cpuMs();
  await sleep(settleSeconds * 1000);
  const settleCpuPct = ((cpuMs() - s0) / (settleSeconds * 1000)) * 100;
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

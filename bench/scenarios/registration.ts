/**
 * Registration: `--jobs` cron jobs (distinct expressions) registered with `--lib`:
 * tickwork register() (scheduler not started), croner new Cron(..., { paused: true }),
 * node-cron createTask() (created stopped). Time, and heap delta after GC with every job retained.
 */
import { arg, memory, report } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const lib = arg('lib', 'tickwork');
const jobs = Number(arg('jobs', '10000'));

function pattern(i: number): string {
  return `${i % 60} ${Math.floor(i / 60) % 24} * * *`;
}

async function main(): Promise<void> {
  const noop = (): void => undefined;
  const { Scheduler } = await load('tickwork');
  const { Cron } = await import('croner');
  const cron = (await import('node-cron')).default;
  // Warm up each library's code paths on a throwaway instance, so JIT work is not timed.
  const warm = new Scheduler();
  for (let i = 0; i < 100; i += 1) warm.register({ name: `w-${i}`, schedule: pattern(i), handler: noop });
  for (let i = 0; i < 100; i += 1) new Cron(pattern(i), { paused: true }, noop).stop();
  for (let i = 0; i < 100; i += 1) void cron.createTask(pattern(i), noop).destroy();
  const retained: unknown[] = [];
  const before = memory();
  const t0 = performance.now();
  if (lib === 'tickwork') {
    const scheduler = new Scheduler();
    for (let i = 0; i < jobs; i += 1) scheduler.register({ name: `job-${i}`, schedule: pattern(i), handler: noop });
    retained.push(scheduler);
  } else if (lib === 'croner') {
    for (let i = 0; i < jobs; i += 1) retained.push(new Cron(pattern(i), { paused: true }, noop));
  } else if (lib === 'node-cron') {
    for (let i = 0; i < jobs; i += 1) retained.push(cron.createTask(pattern(i), noop));
  } else throw new Error(`unknown --lib ${lib}`);
  const ms = performance.now() - t0;
  const after = memory();
  report({ lib, jobs, ms, heapBytes: after.heapUsed - before.heapUsed, retained: retained.length });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

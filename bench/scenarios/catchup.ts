/**
 * Catch-up: a CatchUp job `{ every: '1s' }` whose cursor is `--ticks` seconds behind, on the
 * memory store and the system clock. Runs/s until the backlog is done, and heap (after GC)
 * sampled every tenth of the backlog: flat means memory does not grow with the backlog.
 */
import { arg, gc, report } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const TICKS = Number(arg('ticks', '100000'));
const LIMIT_MS = Number(arg('limit-ms', '120000'));

async function main(): Promise<void> {
  const { MemoryStore, Scheduler } = await load('tickwork');
  const store = new MemoryStore();
  const now = Date.now();
  const created = Math.floor(now / 1000) * 1000 - TICKS * 1000;
  const spec = { name: 'catchup', schedule: { kind: 'every' as const, everyMs: 1000 }, timezone: 'UTC', concurrencyPolicy: 'CatchUp' as const, history: { succeeded: 3, failed: 1 } };
  // The job as a previous deployment left it: created (and last planned) TICKS seconds ago.
  await store.init();
  await store.upsertJobs([{ spec, now: created, initialCursor: created }]);
  const scheduler = new Scheduler({ store });
  let runs = 0;
  const heap: { runs: number; heapUsed: number }[] = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const sampleEvery = Math.max(1, Math.floor(TICKS / 10));
  scheduler.register({
    name: 'catchup',
    schedule: { every: '1s' },
    concurrencyPolicy: 'CatchUp',
    handler: () => {
      runs += 1;
      if (runs % sampleEvery === 0) {
        gc();
        heap.push({ runs, heapUsed: process.memoryUsage().heapUsed });
      }
      if (runs >= TICKS) done();
    },
  });
  gc();
  const heapStart = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  await scheduler.start();
  await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, LIMIT_MS))]);
  const ms = performance.now() - t0;
  await scheduler.stop();
  const peak = Math.max(heapStart, ...heap.map((h) => h.heapUsed));
  report({ ticks: TICKS, runs, ms, runsPerSecond: runs / (ms / 1000), heapStart, heapPeak: peak, heap, completed: runs >= TICKS });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

/**
 * Scale, idle: `--jobs` registered yearly jobs (`0 0 1 1 *`) on `--store`, one instance.
 * `--phase first`: register() + start() until the instance has planned once (`health()`
 * says planner with a `lastPlanAt`), then the CPU of this process and of the store's
 * server over the first `--seconds` after that, heap and RSS per job after forced GCs
 * (taken after that window: a forced GC of the whole heap just before it put its
 * sweeping into the window), and the CPU again over `--seconds` once settled: V8's own
 * full GC after the forced ones (its memory reducer's, 300-600 ms of a 100,000-job
 * heap, which came 20-30 s later and fell into the settled window of earlier runs) and
 * `--quiet` seconds without one, at most `--settle-max` seconds. Each window has
 * per-second slices of this process's CPU, the full GCs of this isolate in it (count,
 * pause ms), and the CPU of the main thread alone (the event loop: JS and GC pauses).
 * The scenario runs bundled, without the tsx loader's thread (bench/lib/child.ts).
 * `--phase restart`: a new process registers the same jobs on the same store (a deploy
 * that changes nothing): time until it has planned, and what the store wrote and read.
 * `--lib bullmq` (Redis): `upsertJobScheduler()` per job and a `Worker`, same windows.
 * The store URLs come from REDIS_URL / DATABASE_URL (the private servers).
 */
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { serverCpu } from '../lib/private-servers.js';
import { arg, cpuMs, memory, report, sleep } from '../lib/stats.js';
import { counterDelta, storeCounters } from '../lib/store-counters.js';
import { createStore, storeKindOf } from '../lib/store.js';
import { load } from '../lib/tickwork.js';

const lib = arg('lib', 'tickwork');
const storeKind = storeKindOf(lib === 'bullmq' ? 'redis' : arg('store', 'memory'));
const ns = arg('ns', 'bench');
const jobs = Number(arg('jobs', '100000'));
const phase = arg('phase', 'first');
const seconds = Number(arg('seconds', '20'));
const settleSeconds = Number(arg('settle', '20'));
const quietSeconds = Number(arg('quiet', '10'));
const settleMaxSeconds = Number(arg('settle-max', '90'));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const storeUrl = storeKind === 'redis' ? REDIS_URL : DATABASE_URL;
const YEARLY = '0 0 1 1 *';

/**
 * When V8 last started a full GC of its own, by `performance.now()`. The bench's own
 * `gc()` calls (heap per job) are left out: counted, they passed for the memory
 * reducer's GCs, and the settled window then caught the reducer's GC of the whole heap
 * (a 53 ms spike in the 2026-11-25 run's Redis row: 0.31 % of a core over 20 s).
 */
let lastFullGcAt = 0;
/** When the bench's own `gc()` last ran, by `performance.now()`. */
let lastForcedGcAt = 0;
/** V8's own full GCs so far (count, pause ms): a window reports its own. */
const fullGcs = { count: 0, ms: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number; flags?: number } })[]) {
    if (entry.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
    if (((entry.detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0) {
      lastForcedGcAt = Math.max(lastForcedGcAt, entry.startTime);
      continue;
    }
    lastFullGcAt = Math.max(lastFullGcAt, entry.startTime);
    fullGcs.count += 1;
    fullGcs.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

interface Started {
  stop(): Promise<void>;
}

async function startTickwork(): Promise<Started> {
  const { Scheduler } = await load('tickwork');
  const store = await createStore(storeKind, ns, { redis: REDIS_URL, postgres: DATABASE_URL });
  const scheduler = new Scheduler(store === undefined ? { logger: false } : { store, logger: false });
  let errors = 0;
  scheduler.on('error', (error) => {
    if (errors++ < 5) process.stderr.write(`tickwork error: ${error.message}\n`);
  });
  const noop = (): void => undefined;
  for (let i = 0; i < jobs; i += 1) scheduler.register({ name: `yearly-${i}`, schedule: YEARLY, handler: noop });
  await scheduler.start();
  // start() resolves within 5 s whatever the store does. An instance takes its leases before it writes its jobs
  // and plans each batch as it is written: every job is written and planned once it has planned and the last
  // registered job (written last: registrations are written in order) is stored.
  const last = `yearly-${jobs - 1}`;
  for (;;) {
    const health = await scheduler.health();
    if (health.planner && health.lastPlanAt !== undefined && (await scheduler.getJob(last).then((job) => job !== undefined, () => false))) break;
    await sleep(20);
  }
  return {
    stop: async () => {
      await scheduler.stop();
      await store?.close?.();
    },
  };
}

async function startBullmq(): Promise<Started> {
  const { Queue, Worker } = await import('bullmq');
  const connection = { url: REDIS_URL };
  const queue = new Queue('idle', { connection, prefix: ns });
  let next = 0;
  // 64 calls in flight, as an app registering its jobs at start would reasonably do.
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < jobs; i = next++) await queue.upsertJobScheduler(`yearly-${i}`, { pattern: YEARLY }, { name: `yearly-${i}` });
    }),
  );
  const worker = new Worker('idle', async () => undefined, { connection, prefix: ns, concurrency: 100 });
  await worker.waitUntilReady();
  return {
    stop: async () => {
      await worker.close();
      await queue.close();
    },
  };
}

/** CPU (ms) of this process's main thread, from /proc (Linux); undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * CPU of this process and of the store's server over `ms`, with this process's per-second
 * slices. The server's reading is taken outside this process's window: its `INFO` call is
 * the bench's work, not the library's.
 */
async function window(ms: number, server: (() => Promise<number>) | undefined) {
  const s0 = await server?.();
  const c0 = cpuMs();
  const m0 = mainThreadCpuMs();
  const gc0 = { ...fullGcs };
  const w0 = performance.now();
  const slices: number[] = [];
  let last = c0;
  while (performance.now() - w0 < ms - 1) {
    await sleep(Math.min(1000, ms - (performance.now() - w0)));
    const c = cpuMs();
    slices.push(c - last);
    last = c;
  }
  const elapsed = performance.now() - w0;
  const c1 = cpuMs();
  const m1 = mainThreadCpuMs();
  const s1 = await server?.();
  return {
    seconds: elapsed / 1000,
    cpuMs: c1 - c0,
    mainThreadCpuMs: m0 === undefined || m1 === undefined ? undefined : m1 - m0,
    serverCpuMs: s0 === undefined || s1 === undefined ? undefined : s1 - s0,
    sliceCpuMs: slices,
    fullGcs: fullGcs.count - gc0.count,
    fullGcPauseMs: fullGcs.ms - gc0.ms,
  };
}

async function main(): Promise<void> {
  // Load the libraries before the baseline so their code is not counted per job.
  await load('tickwork');
  if (storeKind === 'redis') await load('tickwork/redis');
  if (storeKind === 'postgres') await load('tickwork/postgres');
  if (lib === 'bullmq') await import('bullmq');
  const server = await serverCpu(storeKind, storeUrl);
  const counters0 = phase === 'restart' ? await storeCounters(storeKind, storeUrl, ns) : undefined;
  const before = memory();
  const server0 = await server?.();
  const cpu0 = cpuMs();
  const t0 = performance.now();
  const started = lib === 'bullmq' ? await startBullmq() : await startTickwork();
  const readyMs = performance.now() - t0;
  // CPU time, not wall time: on a shared machine the wall time is mostly waiting for a core.
  const readyCpuMs = cpuMs() - cpu0;
  const server1 = await server?.();
  const result: Record<string, unknown> = {
    lib,
    store: storeKind,
    phase,
    jobs,
    readyMs,
    readyCpuMs,
    readyServerCpuMs: server0 === undefined || server1 === undefined ? undefined : server1 - server0,
  };
  const perJob = (): void => {
    const after = memory();
    result.heapPerJob = (after.heapUsed - before.heapUsed) / jobs;
    result.rssPerJob = (after.rss - before.rss) / jobs;
  };
  if (phase === 'restart') {
    perJob();
    result.storeOps = counterDelta(counters0, await storeCounters(storeKind, storeUrl, ns));
  } else {
    result.first = await window(seconds * 1000, server);
    perJob();
    // Settled: V8's own full GC has run after the forced ones, and none for `quiet` seconds (at least `settle` seconds in all).
    const settleStart = performance.now();
    await sleep(Math.max(0, settleSeconds * 1000 - seconds * 1000));
    const settling = (): boolean => lastFullGcAt < lastForcedGcAt || performance.now() - lastFullGcAt < quietSeconds * 1000;
    while (performance.now() - settleStart < settleMaxSeconds * 1000 && settling()) await sleep(1000);
    result.settledAfterS = (performance.now() - t0 - readyMs) / 1000;
    result.settleMaxS = settleMaxSeconds;
    result.idle = await window(seconds * 1000, server);
  }
  await started.stop();
  report(result);
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

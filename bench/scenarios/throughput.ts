/**
 * Throughput: as many no-op runs as possible for `--seconds`, in one process.
 * tickwork: manual `trigger()` floods (maxConcurrentRuns unlimited) on `--store memory|redis|postgres`;
 * peers: `--lib bullmq` (queue.add + Worker) and `--lib pgboss` (send + work).
 * Completed runs are counted over the window after a warm-up; the store server's CPU
 * over the same window comes from Redis `INFO cpu` / Postgres /proc.
 */
import { createStore, storeKindOf } from '../lib/store.js';
import { serverCpuReader } from '../lib/server-cpu.js';
import { arg, cpuMs, report, sleep } from '../lib/stats.js';
import { load } from '../lib/tickwork.js';

const lib = arg('lib', 'tickwork');
const storeKind = storeKindOf(lib === 'bullmq' ? 'redis' : lib === 'pgboss' ? 'postgres' : arg('store', 'memory'));
const ns = arg('ns', 'bench');
const seconds = Number(arg('seconds', '20'));
const warmupMs = Number(arg('warmup', '2000'));
/** Producers running concurrently, and the cap on runs created but not yet completed. */
const PRODUCERS = Number(arg('producers', '64'));
const MAX_OUTSTANDING = Number(arg('outstanding', '2000'));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let created = 0;
let completed = 0;
let running = true;
let waiters: (() => void)[] = [];
function onCompleted(n = 1): void {
  completed += n;
  if (waiters.length > 0 && created - completed < MAX_OUTSTANDING) {
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  }
}
async function producer(send: () => Promise<unknown>): Promise<void> {
  while (running) {
    if (created - completed >= MAX_OUTSTANDING) {
      await new Promise<void>((resolve) => waiters.push(resolve));
      continue;
    }
    created += 1;
    await send();
    // The memory store answers in microtasks only: yield now and then so timers (the window) can fire.
    if ((created & 127) === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

interface Harness {
  send: () => Promise<unknown>;
  stop: () => Promise<void>;
}

async function tickwork(): Promise<Harness> {
  const { Scheduler } = await load('tickwork');
  const store = await createStore(storeKind, ns, { redis: REDIS_URL, postgres: DATABASE_URL });
  const scheduler = new Scheduler(store === undefined ? {} : { store });
  scheduler.on('error', (error) => process.stderr.write(`tickwork error: ${error.message}\n`));
  scheduler.on('run:succeeded', () => onCompleted());
  // A yearly schedule: every run in this scenario is a manual trigger.
  scheduler.register({ name: 'noop', schedule: '0 0 1 1 *', handler: () => undefined });
  await scheduler.start();
  return {
    send: () => scheduler.trigger('noop'),
    stop: async () => {
      await scheduler.stop();
      await store?.close?.();
    },
  };
}

async function bullmq(): Promise<Harness> {
  const { Queue, Worker } = await import('bullmq');
  const connection = { url: REDIS_URL };
  const queue = new Queue('tp', { connection, prefix: ns });
  const worker = new Worker('tp', async () => undefined, { connection, prefix: ns, concurrency: 100 });
  worker.on('completed', () => onCompleted());
  return {
    send: () => queue.add('noop', {}, { removeOnComplete: 1000, removeOnFail: 1000 }),
    stop: async () => {
      running = false;
      await worker.close(true);
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    },
  };
}

async function pgboss(): Promise<Harness> {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema: ns, max: 20 });
  boss.on('error', (error: Error) => process.stderr.write(`pg-boss error: ${error.message}\n`));
  await boss.start();
  await boss.createQueue('tp');
  // batchSize: the worker fetches up to 500 jobs per poll; completion is one statement per batch.
  await boss.work('tp', { batchSize: 500, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    onCompleted(jobs.length);
  });
  return {
    send: () => boss.send('tp', {}),
    stop: () => boss.stop({ graceful: false, wait: true }),
  };
}

async function main(): Promise<void> {
  const harness = lib === 'bullmq' ? await bullmq() : lib === 'pgboss' ? await pgboss() : await tickwork();
  const producers = Array.from({ length: PRODUCERS }, () => producer(harness.send));
  await sleep(warmupMs);
  const serverCpu = serverCpuReader(storeKind) ?? (async () => NaN);
  const c0 = completed;
  const cpu0 = cpuMs();
  const s0 = await serverCpu();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const c1 = completed;
  const cpu1 = cpuMs();
  const s1 = await serverCpu();
  const t1 = performance.now();
  running = false;
  for (const resolve of waiters) resolve();
  await Promise.race([Promise.all(producers), sleep(5000)]);
  await harness.stop();
  const elapsedS = (t1 - t0) / 1000;
  report({
    lib,
    store: storeKind,
    runsPerSecond: (c1 - c0) / elapsedS,
    completed: c1 - c0,
    elapsedS,
    processCpuPct: ((cpu1 - cpu0) / (t1 - t0)) * 100,
    serverCpuPct: ((s1 - s0) / (t1 - t0)) * 100,
  });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

/**
 * Fire lag, in process: 100 jobs firing every second, lag = handler start − nominal tick.
 * `--lib tickwork|tickwork-otel|croner|node-cron --seconds N --jobs N` (tickwork-otel: tickwork
 * with `telemetry` on, bench/lib/otel.ts). One library per process.
 * For tickwork `--store memory|redis|postgres --ns <prefix/schema> --window-start <ms>`
 * (the multi-process store scenarios start three of these with the same window).
 * Peers on stores: `--lib bullmq` (Redis) and `--lib pgboss` (Postgres, minute ticks).
 */
import { startEverySecond, type Stop, type TickworkOptions } from '../lib/every-second.js';
import { createStore, storeKindOf } from '../lib/store.js';
import { arg, cpuMs, FireLog, nextSecond, nowMs, report, sleep } from '../lib/stats.js';

const lib = arg('lib', 'tickwork');
const storeKind = storeKindOf(arg('store', 'memory'));
const ns = arg('ns', 'bench');
const jobs = Number(arg('jobs', '100'));
const seconds = Number(arg('seconds', '20'));
const role = Number(arg('role', '0'));
const periodMs = lib === 'pgboss' ? 60_000 : 1000;
const windowStart = Number(arg('window-start', String(nextSecond(1500))));
const windowEnd = windowStart + seconds * 1000;
/** How long after the window's last tick we keep listening for late fires. */
const graceMs = Number(arg('grace', lib === 'pgboss' ? '25000' : '3000'));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const log = new FireLog(windowStart, windowEnd);
let fires = 0;
function fire(job: string, nominal: number): void {
  const startedAt = nowMs();
  fires += 1;
  log.record(job, nominal, startedAt);
}

/** Time from the tick to `run:created` (emitted by the planner once the store has created the run), ticks in the window only. */
const createdLags: number[] = [];
function recordCreated(nominal: number): void {
  if (nominal >= windowStart && nominal < windowEnd) createdLags.push(nowMs() - nominal);
}

/** tickwork's store for this run and, on a store, where a run's lag splits in two: until the planner has created it, then until an instance has claimed and started it. */
async function tickworkOptions(): Promise<TickworkOptions> {
  const store = await createStore(storeKind, ns, { redis: REDIS_URL, postgres: DATABASE_URL });
  return store === undefined ? {} : { store, onCreated: recordCreated };
}

/** The floor: a bare Node timer per job aimed at the next whole second, re-armed on every fire. */
async function startSetTimeout(): Promise<Stop> {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  // The next tick follows from the previous one, not from Date.now(): Node timers run on the monotonic
  // clock and may fire a fraction of a millisecond before Date.now() reaches the target.
  const arm = (name: string, next: number): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fire(name, next);
      if (!stopped) arm(name, next + 1000);
    }, next - Date.now());
    timers.add(timer);
  };
  const first = Math.floor(Date.now() / 1000) * 1000 + 1000;
  for (let i = 0; i < jobs; i += 1) arm(`job-${i}`, first);
  return async () => {
    stopped = true;
    for (const timer of timers) clearTimeout(timer);
  };
}

async function startBullmq(): Promise<Stop> {
  const { Queue, Worker } = await import('bullmq');
  const connection = { url: REDIS_URL };
  const queueName = 'lag';
  const queue = new Queue(queueName, { connection, prefix: ns });
  if (role === 0) {
    for (let i = 0; i < jobs; i += 1) {
      await queue.upsertJobScheduler(`job-${i}`, { pattern: '* * * * * *' }, { name: `job-${i}`, opts: { removeOnComplete: 1000, removeOnFail: 1000 } });
    }
  }
  const worker = new Worker(
    queueName,
    async (job) => {
      // The scheduler's nominal time is in the job's options (also its id: repeat:<scheduler>:<millis>).
      const nominal = (job.opts as { prevMillis?: number }).prevMillis ?? Number(String(job.id).split(':').pop());
      fire(job.name, nominal);
    },
    { connection, prefix: ns, concurrency: jobs },
  );
  return async () => {
    await worker.close();
    if (role === 0) {
      for (let i = 0; i < jobs; i += 1) await queue.removeJobScheduler(`job-${i}`);
    }
    await queue.close();
  };
}

async function startPgBoss(): Promise<Stop> {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: DATABASE_URL, schema: ns });
  boss.on('error', (error: Error) => process.stderr.write(`pg-boss error: ${error.message}\n`));
  await boss.start();
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    if (role === 0) {
      await boss.createQueue(name);
      await boss.schedule(name, '* * * * *');
    }
  }
  // Other processes wait until the queues exist.
  if (role !== 0) await sleep(3000);
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    await boss.work(name, async (batch) => {
      // pg-boss has no seconds field: ticks are whole minutes, and the job carries no nominal time.
      for (const _ of batch) fire(name, Math.floor(nowMs() / 60_000) * 60_000);
    });
  }
  return () => boss.stop({ graceful: true, wait: true });
}

async function main(): Promise<void> {
  const starters: Record<string, () => Promise<Stop>> = {
    settimeout: startSetTimeout,
    bullmq: startBullmq,
    pgboss: startPgBoss,
  };
  const stop = await (startEverySecond(lib, jobs, fire, lib.startsWith('tickwork') ? await tickworkOptions() : {}) ?? starters[lib]?.());
  if (stop === undefined) throw new Error(`unknown --lib ${lib}`);
  const bootedAt = Date.now();
  if (bootedAt > windowStart - 200) process.stderr.write(`warning: booted ${bootedAt - windowStart} ms after the window start\n`);
  // Whatever fires between boot and the window is the warm-up (JIT compilation): its CPU is reported apart.
  const cpuBooted = cpuMs();
  const firesBooted = fires;
  await sleep(Math.max(0, windowStart - Date.now()));
  const cpu0 = cpuMs();
  const fires0 = fires;
  await sleep(Math.max(0, windowEnd - Date.now()));
  const cpu1 = cpuMs();
  const firesInWindow = fires - fires0;
  await sleep(graceMs);
  await stop();
  report({
    lib,
    store: lib === 'bullmq' ? 'redis' : lib === 'pgboss' ? 'postgres' : storeKind,
    role,
    jobs,
    periodMs,
    windowStart,
    windowEnd,
    lags: log.lags,
    createdLags,
    keys: [...log.seen],
    duplicates: log.duplicates,
    cpuMs: cpu1 - cpu0,
    firesDuringCpuWindow: firesInWindow,
    warmUpCpuMs: cpu0 - cpuBooted,
    warmUpFires: fires0 - firesBooted,
  });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

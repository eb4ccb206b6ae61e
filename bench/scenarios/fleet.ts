/**
 * A fleet: one of `--processes` instances on one store, each registering the same
 * `--jobs` jobs on the schedule `--schedule` (the burst: a daily 6-field cron at one
 * near-future instant, so every job shares one tick, as at the top of an hour; the
 * steady fleet: `*\/10 * * * * *`). Every handler start of a tick in
 * `[--window-start, --window-end)` is recorded: lag = start − nominal tick. The
 * process reports once the window's runs have stopped starting here (`--quiet` ms
 * without one after the window) or `--grace` ms after the window, whichever comes first.
 * CPU is this process's over the window until its last start; whether it was the
 * planner says whose CPU is planning. Store URLs from REDIS_URL / DATABASE_URL.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { arg, cpuMs, FireLog, nowMs, sleep } from '../lib/stats.js';
import { createStore, storeKindOf } from '../lib/store.js';
import { load } from '../lib/tickwork.js';

const storeKind = storeKindOf(arg('store', 'memory'));
const ns = arg('ns', 'bench');
const jobs = Number(arg('jobs', '1000'));
const schedule = arg('schedule', '*/10 * * * * *');
const role = Number(arg('role', '0'));
const windowStart = Number(arg('window-start', '0'));
const windowEnd = Number(arg('window-end', '0'));
const quietMs = Number(arg('quiet', '5000'));
const graceMs = Number(arg('grace', '60000'));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function main(): Promise<void> {
  const { Scheduler } = await load('tickwork');
  const store = await createStore(storeKind, ns, { redis: REDIS_URL, postgres: DATABASE_URL });
  const scheduler = new Scheduler(store === undefined ? { logger: false } : { store, logger: false });
  let errors = 0;
  scheduler.on('error', (error) => {
    if (errors++ < 5) process.stderr.write(`tickwork error (role ${role}): ${error.message}\n`);
  });
  const log = new FireLog(windowStart, windowEnd);
  /** When a handler of the window last started here, or its planner last created a run of the window. */
  let lastActivity = 0;
  /** Time from the tick to `run:created` in this process (its planner's), ticks in the window only. */
  const createdLags: number[] = [];
  /** Per tick of the window: [runs started here, the latest start's lag, the latest creation's lag here]. */
  const perTick: Record<string, [number, number, number]> = {};
  const tickEntry = (nominal: number) => (perTick[nominal] ??= [0, -Infinity, -Infinity]);
  scheduler.on('run:created', ({ run }) => {
    const nominal = run.scheduledAt.getTime();
    if (nominal < windowStart || nominal >= windowEnd) return;
    const lag = nowMs() - nominal;
    lastActivity = Math.max(lastActivity, nowMs()); // planning is activity too: a planner still creating runs stays
    createdLags.push(lag);
    const entry = tickEntry(nominal);
    entry[2] = Math.max(entry[2], lag);
  });
  let plannerAtTick = false;
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    scheduler.register({
      name,
      schedule,
      handler: ({ scheduledAt }) => {
        const startedAt = nowMs();
        const nominal = scheduledAt.getTime();
        if (nominal >= windowStart && nominal < windowEnd) {
          lastActivity = startedAt;
          const entry = tickEntry(nominal);
          entry[0] += 1;
          entry[1] = Math.max(entry[1], startedAt - nominal);
        }
        log.record(name, nominal, startedAt);
      },
    });
  }
  const t0 = performance.now();
  await scheduler.start();
  const startMs = performance.now() - t0;
  const bootedAt = Date.now();
  if (bootedAt > windowStart - 1000) process.stderr.write(`warning: role ${role} started ${bootedAt - windowStart} ms after the window start\n`);
  await sleep(Math.max(0, windowStart - 500 - Date.now()));
  plannerAtTick = scheduler.isPlanner;
  const partitionsAtTick = scheduler.plannedPartitions.length;
  // BENCH_WINDOW_PROF=<dir>: a CPU profile of this process over the window only (not its registration).
  const profileDir = process.env.BENCH_WINDOW_PROF;
  const session = profileDir ? new Session() : undefined;
  if (session !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const cpu0 = cpuMs();
  await sleep(Math.max(0, windowEnd - Date.now()));
  // Until handlers have stopped starting here and its planner has stopped creating runs: the last tick's runs may still be
  // draining (an instance that left while planning would leave its partitions to the others only after its leases expired).
  while (Date.now() < windowEnd + graceMs && (lastActivity === 0 || nowMs() - lastActivity < quietMs)) await sleep(200);
  const cpuMsInWindow = cpuMs() - cpu0;
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${profileDir}/fleet-${storeKind}-${role}-${process.pid}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  const cpuIntervalMs = Date.now() - (windowStart - 500);
  const planner = plannerAtTick || scheduler.isPlanner;
  await scheduler.stop();
  await store?.close?.();
  // Megabytes of keys: exit once the pipe has taken them (a timer could cut the line short).
  process.stdout.write(`@@RESULT ${JSON.stringify({
    store: storeKind,
    role,
    jobs,
    schedule,
    startMs,
    planner,
    partitions: partitionsAtTick,
    windowStart,
    windowEnd,
    lags: log.lags,
    createdLags,
    perTick,
    keys: [...log.seen],
    duplicates: log.duplicates,
    cpuMs: cpuMsInWindow,
    // From 500 ms before the window start (the runs created ahead of the first tick) until the starts stopped here.
    cpuIntervalMs,
  })}\n`, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

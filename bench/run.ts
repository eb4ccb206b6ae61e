/**
 * `npm run bench [-- --only a,b] [-- --quick]`: runs every scenario (each library in its own
 * child process), then writes bench/results.json, bench/RESULTS.md and bench/lag.svg.
 * `--only` re-runs some scenarios and merges them into the previous results.json; `--render` only
 * re-renders RESULTS.md and lag.svg from results.json. tickwork is measured from its build
 * (bench/lib/tickwork.ts), which this runs first (`npm run build`).
 * Scenarios: fire-lag, fire-lag-stores, throughput, alloc, idle, skip, catch-up, cron-maths, preview, registration, footprint,
 * and the scale scenarios scale-idle, scale-idle-versus, burst, every-10s (on private Redis and Postgres servers the bench starts and
 * removes: bench/lib/private-servers.ts) and burst-cluster (the burst on a 3-master Redis Cluster the bench starts,
 * test/integration/redis-cluster.ts). `--jobs N` sets their job counts for development (default 1,000,000
 * registered, a 100,000-job burst, 10,000 jobs every 10 s); `--quick` shortens every-10s to 30 s;
 * `--fleet redis:3,postgres:1` picks every-10s's runs (store:instances), `--burst memory:1,redis:3` the burst's; BENCH_PARTITIONS
 * sets the stores' partition count; BENCH_CPU_PROF=<dir> writes a CPU profile of each scale child there (`--cpu-prof`);
 * `--baseline <dir> <label>` measures another commit's build in `<dir>` beside this one (scale-idle, 100,000 jobs);
 * scale-idle-versus measures tickwork on Redis beside BullMQ at 100,000 jobs, `--versus-rounds N` times (3).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';
import { runScenario, ROOT } from './lib/child.js';
import { renderMarkdown, renderSvg, type Results } from './lib/report.js';
import { DATABASE_URL, REDIS_URL, systemInfo } from './lib/sysinfo.js';
import { serverCpuReader } from './lib/server-cpu.js';
import { serverCpu, startPrivateServers, type PrivateServers } from './lib/private-servers.js';
import { storeKindOf } from './lib/store.js';
import { startCluster } from '../test/integration/redis-cluster.js';
import { sleep, summarize } from './lib/stats.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const onlyIndex = argv.indexOf('--only');
const only = onlyIndex >= 0 ? new Set((argv[onlyIndex + 1] ?? '').split(',')) : undefined;
/** BENCH_RESULTS_JSON: where this run keeps its results (two runs at once must not write one file). */
const RESULTS_JSON = process.env.BENCH_RESULTS_JSON ?? `${ROOT}bench/results.json`;
/** `--jobs N`: the scale scenarios' job counts for development (a million and 100,000 otherwise). */
const jobsIndex = argv.indexOf('--jobs');
/** `--memory-jobs N`: scale-idle's job count on the memory store (default: as `--jobs`). */
const memoryJobsIndex = argv.indexOf('--memory-jobs');
/** `--fleet-seconds S`: every-10s's window (a multiple of 10; 120 by default, 30 with --quick). */
const fleetSecondsIndex = argv.indexOf('--fleet-seconds');
const scaleJobs = jobsIndex >= 0 ? Number(argv[jobsIndex + 1]) : undefined;
/** `--fleet redis:3,postgres:1`: every-10s's runs (store and instances); one, two and three instances on each store by default. */
const fleetIndex = argv.indexOf('--fleet');
const fleetRuns: readonly (readonly [string, number])[] =
  fleetIndex >= 0
    ? (argv[fleetIndex + 1] ?? '').split(',').map((run) => [run.split(':')[0] ?? 'redis', Number(run.split(':')[1] ?? 3)] as const)
    : [['redis', 1], ['redis', 2], ['redis', 3], ['postgres', 1], ['postgres', 2], ['postgres', 3]];
/** `--burst memory:1,redis:3`: the burst's runs (store and instances); memory 1, Redis 3 and Postgres 3 by default. */
const burstIndex = argv.indexOf('--burst');
const burstRuns: readonly (readonly [string, number])[] =
  burstIndex >= 0
    ? (argv[burstIndex + 1] ?? '').split(',').map((run) => [run.split(':')[0] ?? 'redis', Number(run.split(':')[1] ?? 3)] as const)
    : [['memory', 1], ['redis', 3], ['postgres', 3]];
/**
 * `--baseline <dir> <label>`: a build of another commit in `<dir>` (its `dist/`); scale-idle
 * then measures it beside this build at `comparisonJobs`, one after the other in the same run.
 */
const baselineIndex = argv.indexOf('--baseline');
/** `--scale-stores redis,postgres`: scale-idle on these stores only (all three otherwise; BullMQ runs with redis). */
const scaleStoresIndex = argv.indexOf('--scale-stores');
const scaleStores = scaleStoresIndex >= 0 ? new Set((argv[scaleStoresIndex + 1] ?? '').split(',')) : undefined;
const comparisonIndex = argv.indexOf('--comparison-jobs');
const versusIndex = argv.indexOf('--versus-rounds');
const baseline = baselineIndex >= 0 ? { root: argv[baselineIndex + 1] as string, label: argv[baselineIndex + 2] ?? 'baseline' } : undefined;

const D0 = quick
  ? { lagSeconds: 4, storeLagSeconds: 4, lagWarmUpSeconds: 2, tpSeconds: 4, allocSeconds: 3, allocWarmUpSeconds: 2, idleSeconds: 4, idleJobs: 100_000, catchUpTicks: 20_000, cronCount: 20_000, cronReps: 1, pgbossLag: false }
  : { lagSeconds: 20, storeLagSeconds: 20, lagWarmUpSeconds: 40, tpSeconds: 20, allocSeconds: 10, allocWarmUpSeconds: 40, idleSeconds: 20, idleJobs: 100_000, catchUpTicks: 100_000, cronCount: 100_000, cronReps: 2, pgbossLag: true };
/** The scale scenarios: registered jobs, burst size and the `*\/10` fleet's jobs and seconds. */
const D = {
  ...D0,
  idleScaleJobs: scaleJobs ?? 1_000_000,
  memoryScaleJobs: memoryJobsIndex >= 0 ? Number(argv[memoryJobsIndex + 1]) : (scaleJobs ?? 1_000_000),
  burstJobs: scaleJobs ?? 100_000,
  fleetJobs: scaleJobs === undefined ? 10_000 : Math.min(scaleJobs, 10_000),
  fleetSeconds: fleetSecondsIndex >= 0 ? Number(argv[fleetSecondsIndex + 1]) : quick ? 30 : 120,
  /** BullMQ registers one job scheduler per round trip (~2,000/s here): 100,000 of them, its idle cost reported per 100,000 jobs. */
  bullmqIdleJobs: 100_000,
  /** Rounds of tickwork on Redis beside BullMQ at `bullmqIdleJobs` (`--versus-rounds N`): their medians are the comparison. */
  versusRounds: versusIndex >= 0 ? Number(argv[versusIndex + 1]) : quick ? 1 : 3,
  /** Jobs of the before/after comparison with `--baseline`. */
  comparisonJobs: comparisonIndex >= 0 ? Number(argv[comparisonIndex + 1]) : Math.min(scaleJobs ?? 100_000, 100_000),
};

const scenario = (name: string) => `bench/scenarios/${name}.ts`;
// Preview: sparse expressions (ten ticks span ~250 and ~36 years), a dense one, in zones with and without DST.
const PREVIEW_EXPRESSIONS = ['0 0 * 2 5#5', '0 0 29 2 *', '0 9 * * 1-5'];
const PREVIEW_ZONES = ['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Africa/Casablanca'];
const PREVIEW_REPS = quick ? 1 : 5;
const uid = () => randomBytes(4).toString('hex');
function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function cleanRedis(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL);
  try {
    for (const pattern of [`{${prefix}[}/]*`, `${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await client.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    client.disconnect();
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

interface LagChild {
  lib: string;
  store: string;
  lags: number[];
  /** tickwork on a store: tick → `run:created` in the planner process (empty in the others; peers have none). */
  createdLags?: number[];
  /** Per tick: runs started here, the latest start's lag, the latest creation's lag here. */
  perTick?: Record<string, [number, number, number]>;
  keys: string[];
  duplicates: number;
  cpuMs: number;
  firesDuringCpuWindow: number;
  warmUpCpuMs: number;
  warmUpFires: number;
  jobs: number;
  periodMs: number;
  windowStart: number;
  windowEnd: number;
}

/** Merges the reports of the processes of one lag measurement (`serverCpuMs`: the store server's CPU over the window). */
function mergeLag(children: LagChild[], processes: number, serverCpuMs: number | undefined) {
  const first = children[0] as LagChild;
  const counts = new Map<string, number>();
  for (const child of children) for (const key of child.keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  let duplicates = children.reduce((acc, c) => acc + c.duplicates, 0);
  for (const n of counts.values()) duplicates += n - 1;
  const expected = first.jobs * Math.round((first.windowEnd - first.windowStart) / first.periodMs);
  const lags = children.flatMap((c) => c.lags);
  const fires = children.reduce((acc, c) => acc + c.firesDuringCpuWindow, 0);
  const cpu = children.reduce((acc, c) => acc + c.cpuMs, 0);
  const summary = summarize(lags);
  const createdLags = children.flatMap((c) => c.createdLags ?? []);
  const sorted = [...lags].sort((a, b) => a - b);
  const quantiles = Array.from({ length: 201 }, (_, i) => sorted[Math.min(sorted.length - 1, Math.floor((i / 200) * (sorted.length - 1)))] ?? NaN);
  return {
    lib: first.lib,
    store: first.store,
    processes,
    jobs: first.jobs,
    periodMs: first.periodMs,
    expected,
    fired: counts.size,
    missed: expected - counts.size,
    duplicates,
    ...summary,
    created: createdLags.length === 0 ? undefined : summarize(createdLags),
    cpuMsPer1000: perThousand(cpu, fires),
    warmUpCpuMsPer1000: perThousand(children.reduce((acc, c) => acc + c.warmUpCpuMs, 0), children.reduce((acc, c) => acc + c.warmUpFires, 0)),
    serverCpuMsPer1000: serverCpuMs === undefined ? undefined : perThousand(serverCpuMs, fires),
    quantiles,
  };
}

async function lagRun(lib: string, store: string, processes: number, seconds: number, ns: string, extra: string[] = []) {
  const periodMs = lib === 'pgboss' ? 60_000 : 1000;
  // Boot (three processes take longer), then, for one-second ticks, a warm-up of firing before the window:
  // the figures are a running scheduler's, not its first seconds of JIT compilation (pg-boss's window is a minute).
  const lead = (processes > 1 ? 9000 : 2500) + (periodMs === 1000 ? D.lagWarmUpSeconds * 1000 : 0);
  const windowStart = Math.ceil((Date.now() + lead) / periodMs) * periodMs;
  const grace = lib === 'pgboss' ? 2000 : 3000; // pg-boss: the window is the whole minute after its one tick
  const [serverCpuMs, ...children] = await Promise.all([
    serverCpuOver(store, windowStart, windowStart + seconds * 1000),
    ...Array.from({ length: processes }, (_, role) =>
      runScenario<LagChild>(scenario('fire-lag'), {
        args: ['--lib', lib, '--store', store, '--ns', ns, '--seconds', String(seconds), '--window-start', String(windowStart), '--role', String(role), '--grace', String(grace), ...extra],
        timeoutMs: windowStart - Date.now() + seconds * 1000 + grace + 60_000,
      }),
    ),
  ]);
  return mergeLag(children.map((r) => r[0] as LagChild), processes, serverCpuMs);
}

function perThousand(cpuMs: number, fires: number): number {
  return fires === 0 ? NaN : (cpuMs / fires) * 1000;
}

/** CPU the store's server spent over the window (ms), read at its edges; undefined for the memory store. */
async function serverCpuOver(store: string, windowStart: number, windowEnd: number): Promise<number | undefined> {
  const read = serverCpuReader(store);
  if (read === undefined) return undefined;
  await sleep(windowStart - Date.now());
  const before = await read();
  await sleep(windowEnd - Date.now());
  return (await read()) - before;
}

/**
 * How long scale-idle waits at most for V8's own full GC after the bench's forced ones before its settled window.
 * At 100,000 jobs V8's memory reducer collected tickwork's 57 MB heap 75-100 s after them (BullMQ's, 2 MB, 20-26 s):
 * with 60 s, its 190 ms fell into the settled window of one run of two (2026-11-28 15:25).
 */
const SETTLE_MAX_S = '150';

/** The scale scenarios' children: a larger heap for a million jobs' records (V8's default stops near 4 GB). */
const SCALE_NODE_FLAGS = ['--max-old-space-size=12288', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])];

/** Runs `body` with private Redis and Postgres servers (see bench/lib/private-servers.ts), removed afterwards. */
async function withPrivateServers(body: (servers: PrivateServers) => Promise<void>): Promise<void> {
  const servers = await startPrivateServers();
  try {
    await body(servers);
  } finally {
    await servers.dispose();
  }
}

function scaleNamespace(store: string, name: string): string {
  return store === 'postgres' ? `bench_${name}_${uid()}` : `bench-${name}-${uid()}`;
}

interface FleetChild {
  role: number;
  planner: boolean;
  /** How many partitions it planned at the window's start. */
  partitions?: number;
  startMs: number;
  lags: number[];
  /** Tick → `run:created` in this process (its planner's). */
  createdLags?: number[];
  /** Per tick: runs started here, the latest start's lag, the latest creation's lag here. */
  perTick?: Record<string, [number, number, number]>;
  keys: string[];
  duplicates: number;
  cpuMs: number;
  cpuIntervalMs: number;
}

/** `processes` fleet children on one store and schedule; expected = jobs × ticks in the window. */
async function fleetRun(store: string, processes: number, jobs: number, schedule: string, windowStart: number, windowEnd: number, ticks: number, env: Record<string, string>) {
  const ns = scaleNamespace(store, 'fleet');
  const url = store === 'redis' ? env.REDIS_URL : env.DATABASE_URL;
  const readServerCpu = url === undefined ? undefined : await serverCpu(storeKindOf(store), url);
  // The store server's CPU from 500 ms before the window (as the instances') until the last instance is done.
  const serverCpuAtStart = readServerCpu === undefined ? undefined : sleep(windowStart - 500 - Date.now()).then(readServerCpu);
  const loadAtStart = loadavg()[0] as number;
  const children = await Promise.all(
    Array.from({ length: processes }, (_, role) =>
      runScenario<FleetChild>(scenario('fleet'), {
        args: ['--store', store, '--ns', ns, '--jobs', String(jobs), '--schedule', schedule, '--role', String(role), '--window-start', String(windowStart), '--window-end', String(windowEnd)],
        env,
        nodeFlags: SCALE_NODE_FLAGS,
        timeoutMs: windowEnd - Date.now() + 180_000,
      }).then((r) => r[0] as FleetChild),
    ),
  );
  const counts = new Map<string, number>();
  for (const child of children) for (const key of child.keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  let duplicates = children.reduce((acc, c) => acc + c.duplicates, 0);
  for (const n of counts.values()) duplicates += n - 1;
  const serverCpuMs = readServerCpu === undefined ? undefined : (await readServerCpu()) - ((await serverCpuAtStart) as number);
  readServerCpu?.close?.();
  const serverCpuIntervalMs = Date.now() - (windowStart - 500);
  const lags = children.flatMap((c) => c.lags);
  const createdLags = children.flatMap((c) => c.createdLags ?? []);
  const expected = jobs * ticks;
  return {
    store,
    processes,
    jobs,
    schedule,
    ticks,
    expected,
    fired: counts.size,
    missed: expected - counts.size,
    duplicates,
    ...summarize(lags),
    // Tick → run created (every planner's): how far ahead of the tick planning got, and when it ended.
    created: createdLags.length === 0 ? undefined : { min: createdLags.reduce((a, b) => Math.min(a, b)), ...summarize(createdLags) },
    // Per tick (s after the window start): the last handler start's lag and the last run creation's (ms).
    perTick: Object.fromEntries(
      [...new Set(children.flatMap((c) => Object.keys(c.perTick ?? {})))].sort().map((tick) => {
        const entries = children.map((c) => c.perTick?.[tick]).filter((e) => e !== undefined);
        return [String((Number(tick) - windowStart) / 1000), { lastStart: Math.round(Math.max(...entries.map((e) => e[1]))), lastCreated: Math.round(Math.max(...entries.map((e) => e[2]))) }];
      }),
    ),
    // The machine's 1-minute load average when the instances were started and when they were done.
    load: [loadAtStart, loadavg()[0] as number],
    serverCpuMs,
    serverCpuPct: serverCpuMs === undefined ? undefined : (serverCpuMs / serverCpuIntervalMs) * 100,
    // Per process: whether it planned, its CPU over the window (ms and % of a core), the runs it started, its start() time.
    instances: children
      .sort((a, b) => a.role - b.role)
      .map((c) => ({ planner: c.planner, partitions: c.partitions, cpuMs: c.cpuMs, cpuPct: (c.cpuMs / c.cpuIntervalMs) * 100, started: c.lags.length, startMs: c.startMs })),
  };
}

/** A daily 6-field cron expression for the UTC instant `at` (a whole second): one tick that every job shares. */
function dailyAt(at: number): string {
  const d = new Date(at);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

interface MasterReading {
  /** Calls per command (INFO commandstats). */
  readonly calls: Map<string, number>;
  readonly cpuMs: number;
}

/** What each master of a cluster has done so far: calls per command and CPU (ms). */
async function perMaster(nodes: readonly Redis[]): Promise<MasterReading[]> {
  return Promise.all(
    nodes.map(async (node) => {
      const [stats, cpu] = [await node.info('commandstats'), await node.info('cpu')];
      const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? NaN);
      return {
        calls: new Map([...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((match) => [match[1] as string, Number(match[2])])),
        cpuMs: (field('used_cpu_sys') + field('used_cpu_user')) * 1000,
      };
    }),
  );
}

/** Per master, what it did between two `perMaster` readings (less the two INFO of the first), and the commands run most, all masters together. */
function masterDeltas(before: MasterReading[], after: MasterReading[]) {
  const sum = (calls: Map<string, number>): number => [...calls.values()].reduce((a, b) => a + b, 0);
  const commands = after.map((a, i) => sum(a.calls) - sum(before[i]?.calls ?? new Map()) - 2);
  const cpuMs = after.map((a, i) => a.cpuMs - (before[i]?.cpuMs ?? NaN));
  const byCommand = new Map<string, number>();
  after.forEach((a, i) => {
    for (const [command, calls] of a.calls) byCommand.set(command, (byCommand.get(command) ?? 0) + calls - (before[i]?.calls.get(command) ?? 0));
  });
  byCommand.set('info', (byCommand.get('info') ?? 0) - 2 * after.length);
  const top = Object.fromEntries([...byCommand].filter(([, calls]) => calls > 0).sort((a, b) => b[1] - a[1]).slice(0, 6));
  return { commands, busiestOverQuietest: Math.max(...commands) / Math.min(...commands), cpuMs, top };
}

const loadAverage = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' ');

const scenarios: Record<string, (results: Results) => Promise<void>> = {
  async 'fire-lag'(results) {
    results['fire-lag'] = [];
    // tickwork-otel: tickwork with `telemetry` on (bench/lib/otel.ts), for the CPU ratio of telemetry on and off.
    for (const lib of ['tickwork', 'tickwork-otel', 'croner', 'node-cron', 'settimeout']) {
      log(`fire-lag ${lib}`);
      results['fire-lag'].push(await lagRun(lib, 'memory', 1, D.lagSeconds, 'mem'));
    }
  },
  async 'fire-lag-stores'(results) {
    results['fire-lag-stores'] = [];
    // tickwork also alone (one process): what three processes on one store add to its lag.
    const runs: [string, string, number][] = [['tickwork', 'redis', 3], ['tickwork', 'redis', 1], ['bullmq', 'redis', 3], ['tickwork', 'postgres', 3], ['tickwork', 'postgres', 1]];
    if (D.pgbossLag) runs.push(['pgboss', 'postgres', 3]);
    for (const [lib, store, processes] of runs) {
      const ns = store === 'redis' ? `bench-lag-${lib}-${uid()}` : `bench_lag_${lib}_${uid()}`;
      log(`fire-lag-stores ${lib} ${store} (${processes} process${processes > 1 ? 'es' : ''})`);
      try {
        // pg-boss ticks once a minute: one tick per job in a one-minute window.
        results['fire-lag-stores'].push(await lagRun(lib, store, processes, lib === 'pgboss' ? 60 : D.storeLagSeconds, ns));
      } finally {
        if (store === 'redis') await cleanRedis(ns);
        else await dropSchema(ns);
      }
    }
  },
  async throughput(results) {
    results.throughput = [];
    const runs: [string, string][] = [['tickwork', 'memory'], ['tickwork', 'redis'], ['bullmq', 'redis'], ['tickwork', 'postgres'], ['pgboss', 'postgres']];
    for (const [lib, store] of runs) {
      const ns = store === 'postgres' ? `bench_tp_${lib}_${uid()}` : `bench-tp-${lib}-${uid()}`;
      log(`throughput ${lib} ${store}`);
      try {
        const [r] = await runScenario(scenario('throughput'), { args: ['--lib', lib, '--store', store, '--ns', ns, '--seconds', String(D.tpSeconds)], timeoutMs: D.tpSeconds * 1000 + 60_000 });
        results.throughput.push(r as Record<string, unknown>);
      } finally {
        if (store === 'redis') await cleanRedis(ns);
        else if (store === 'postgres') await dropSchema(ns);
      }
    }
  },
  async alloc(results) {
    results.alloc = [];
    for (const lib of ['tickwork', 'croner', 'node-cron']) {
      log(`alloc ${lib}`);
      const [r] = await runScenario(scenario('alloc'), { args: ['--lib', lib, '--seconds', String(D.allocSeconds), '--warm-up', String(D.allocWarmUpSeconds)] });
      results.alloc.push(r as Record<string, unknown>);
    }
  },
  async idle(results) {
    results.idle = [];
    for (const lib of ['tickwork', 'croner', 'node-cron']) {
      log(`idle ${lib}`);
      try {
        const [r] = await runScenario(scenario('idle'), { args: ['--lib', lib, '--jobs', String(D.idleJobs), '--seconds', String(D.idleSeconds)], timeoutMs: D.idleSeconds * 1000 + 120_000 });
        results.idle.push(r as Record<string, unknown>);
      } catch (error) {
        const message = String((error as Error).message);
        results.idle.push({ lib, jobs: D.idleJobs, error: /heap out of memory|Allocation failed/i.test(message) ? 'out of memory (JavaScript heap, default limit)' : message.slice(0, 200) });
      }
    }
  },
  async skip(results) {
    log('skip');
    const [r] = await runScenario(scenario('skip'));
    results.skip = r as Record<string, unknown>;
  },
  async 'catch-up'(results) {
    log('catch-up');
    const [r] = await runScenario(scenario('catchup'), { args: ['--ticks', String(D.catchUpTicks)] });
    results['catch-up'] = r as Record<string, unknown>;
  },
  async 'cron-maths'(results) {
    log('cron-maths');
    const [r] = await runScenario(scenario('cron-maths'), { args: ['--count', String(D.cronCount), '--reps', String(D.cronReps)], timeoutMs: 400_000 });
    results['cron-maths'] = r as Record<string, unknown>;
  },
  async preview(results) {
    // Each measurement in a fresh process: "cold" is the point, and a process warms what it touches.
    const cases: { mode: string; expression: string; zone?: string }[] = [];
    for (const expression of PREVIEW_EXPRESSIONS) {
      for (const zone of PREVIEW_ZONES) cases.push({ mode: 'first', expression, zone }, { mode: 'cold', expression, zone });
      cases.push({ mode: 'zones', expression });
    }
    const rows: Record<string, unknown>[] = [];
    for (const { mode, expression, zone } of cases) {
      log(`preview ${mode} ${expression}${zone === undefined ? '' : ` ${zone}`}`);
      const args = ['--mode', mode, '--expression', expression, ...(zone === undefined ? [] : ['--zone', zone])];
      // A single cold call is one sample: the median of PREVIEW_REPS processes (the sweep over all zones is its own sample set).
      const reps = mode === 'zones' ? 1 : PREVIEW_REPS;
      const samples: Record<string, number>[] = [];
      for (let rep = 0; rep < reps; rep++) samples.push(...((await runScenario(scenario('preview'), { args })) as Record<string, number>[]));
      const median = (key: string) => [...samples.map((s) => s[key] as number)].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
      rows.push(mode === 'zones' ? samples[0]! : { ...samples[0], ms: median('ms'), cpuMs: median('cpuMs'), warmMs: median('warmMs'), reps });
    }
    results.preview = rows;
  },
  async registration(results) {
    results.registration = [];
    for (const lib of ['tickwork', 'croner', 'node-cron']) {
      log(`registration ${lib}`);
      const [r] = await runScenario(scenario('registration'), { args: ['--lib', lib, '--jobs', '10000'] });
      results.registration.push(r as Record<string, unknown>);
    }
  },
  async 'scale-idle'(results) {
    results['scale-idle'] = [];
    const jobs = D.idleScaleJobs;
    await withPrivateServers(async (servers) => {
      const env = { REDIS_URL: servers.redis, DATABASE_URL: servers.postgres };
      const runs: [string, string][] = [['tickwork', 'memory'], ['tickwork', 'redis'], ['bullmq', 'redis'], ['tickwork', 'postgres']];
      for (const [lib, store] of runs.filter(([, store]) => scaleStores?.has(store) ?? true)) {
        const ns = scaleNamespace(store, 'scale');
        const n = lib === 'bullmq' ? Math.min(jobs, D.bullmqIdleJobs) : store === 'memory' ? D.memoryScaleJobs : jobs;
        const args = ['--lib', lib, '--store', store, '--ns', ns, '--jobs', String(n), '--seconds', String(D.idleSeconds), '--settle-max', SETTLE_MAX_S];
        log(`scale-idle ${lib} ${store} (${n.toLocaleString('en-US')} jobs)`);
        try {
          const [first] = await runScenario<Record<string, unknown>>(scenario('scale-idle'), { args, env, nodeFlags: SCALE_NODE_FLAGS, timeoutMs: 3_600_000 });
          const row: Record<string, unknown> = { ...first };
          if (lib === 'tickwork' && store !== 'memory') {
            log(`scale-idle ${lib} ${store}: restart with unchanged jobs`);
            const [restart] = await runScenario<Record<string, unknown>>(scenario('scale-idle'), { args: [...args, '--phase', 'restart'], env, nodeFlags: SCALE_NODE_FLAGS, timeoutMs: 3_600_000 });
            row.restart = restart;
          }
          results['scale-idle'].push(row);
        } catch (error) {
          log(`scale-idle ${lib} ${store} FAILED: ${String((error as Error).message).slice(0, 300)}`);
          results['scale-idle'].push({ lib, store, jobs, error: String((error as Error).message).slice(0, 300) });
        }
      }
      // Before and after this branch's changes, at the same job count, one after the other.
      results['scale-idle-comparison'] = [];
      if (baseline === undefined) return;
      for (const store of ['redis', 'postgres'].filter((store) => scaleStores?.has(store) ?? true)) {
        for (const build of ['this branch', baseline.label]) {
          const n = D.comparisonJobs;
          log(`scale-idle comparison ${store} ${build} (${n.toLocaleString('en-US')} jobs)`);
          const args = ['--lib', 'tickwork', '--store', store, '--ns', scaleNamespace(store, 'cmp'), '--jobs', String(n), '--seconds', String(D.idleSeconds), '--settle-max', SETTLE_MAX_S];
          const buildEnv = build === 'this branch' ? env : { ...env, BENCH_TICKWORK_ROOT: baseline.root };
          try {
            const [row] = await runScenario<Record<string, unknown>>(scenario('scale-idle'), { args, env: buildEnv, nodeFlags: SCALE_NODE_FLAGS, timeoutMs: 1_800_000 });
            results['scale-idle-comparison'].push({ ...row, build });
          } catch (error) {
            results['scale-idle-comparison'].push({ store, build, jobs: n, error: String((error as Error).message).slice(0, 300) });
          }
        }
      }
    });
  },
  async 'scale-idle-versus'(results) {
    // tickwork beside BullMQ at the same job count, alternating which goes first: one run of each is at the mercy
    // of where V8's GCs and the box's other work fall in a 20 s window of 10-40 ms; their medians are not.
    results['scale-idle-versus'] = [];
    const n = Math.min(D.idleScaleJobs, D.bullmqIdleJobs);
    await withPrivateServers(async (servers) => {
      const env = { REDIS_URL: servers.redis, DATABASE_URL: servers.postgres };
      for (let round = 0; round < D.versusRounds; round += 1) {
        for (const lib of round % 2 === 0 ? ['tickwork', 'bullmq'] : ['bullmq', 'tickwork']) {
          log(`scale-idle versus, round ${round + 1}: ${lib} redis (${n.toLocaleString('en-US')} jobs)`);
          const args = ['--lib', lib, '--store', 'redis', '--ns', scaleNamespace('redis', 'vs'), '--jobs', String(n), '--seconds', String(D.idleSeconds), '--settle-max', SETTLE_MAX_S];
          try {
            const [row] = await runScenario<Record<string, unknown>>(scenario('scale-idle'), { args, env, nodeFlags: SCALE_NODE_FLAGS, timeoutMs: 1_800_000 });
            results['scale-idle-versus'].push({ ...row, round, load: loadavg()[0] });
          } catch (error) {
            results['scale-idle-versus'].push({ lib, store: 'redis', round, jobs: n, error: String((error as Error).message).slice(0, 300) });
          }
        }
      }
    });
  },
  async burst(results) {
    results.burst = [];
    const jobs = D.burstJobs;
    await withPrivateServers(async (servers) => {
      const env = { REDIS_URL: servers.redis, DATABASE_URL: servers.postgres };
      for (const [store, processes] of burstRuns) {
        // Time for three processes to register (and one to load) every job before the tick: ~60 s per 100,000 on Postgres.
        const lead = 20_000 + Math.ceil(jobs / 100_000) * (store === 'memory' ? 5_000 : 60_000);
        const tick = Math.ceil((Date.now() + lead) / 1000) * 1000;
        log(`burst ${store} (${processes} process${processes > 1 ? 'es' : ''}, ${jobs.toLocaleString('en-US')} jobs, tick at ${new Date(tick).toISOString().slice(11, 19)})`);
        try {
          results.burst.push(await fleetRun(store, processes, jobs, dailyAt(tick), tick, tick + 1, 1, env));
        } catch (error) {
          log(`burst ${store} FAILED: ${String((error as Error).message).slice(0, 300)}`);
          results.burst.push({ store, processes, jobs, error: String((error as Error).message).slice(0, 300) });
        }
      }
    });
  },
  async 'burst-cluster'(results) {
    // The burst with 3 instances on a 3-master Redis Cluster, the store's default partitions: how evenly the
    // partitions' hash tags spread the work over the masters (issue 20: the busiest within 2x of the quietest).
    const jobs = D.burstJobs;
    const cluster = await startCluster();
    const masters = cluster.nodes.map((node) => new Redis({ ...node }));
    try {
      const env = { REDIS_CLUSTER_NODES: cluster.nodes.map((node) => `${node.host}:${node.port}`).join(',') };
      const processes = 3;
      const lead = 20_000 + Math.ceil(jobs / 100_000) * 60_000;
      const tick = Math.ceil((Date.now() + lead) / 1000) * 1000;
      const loadAtStart = loadAverage();
      log(`burst-cluster (${processes} processes, ${jobs.toLocaleString('en-US')} jobs, 3 masters, tick at ${new Date(tick).toISOString().slice(11, 19)}, load ${loadAtStart})`);
      const atSpawn = await perMaster(masters);
      // From 500 ms before the tick (the runs created ahead of it), as the instances' CPU.
      const beforeTick = sleep(tick - 500 - Date.now()).then(() => perMaster(masters));
      beforeTick.catch(() => undefined); // awaited below, unless the fleet fails first
      try {
        const row = await fleetRun('redis', processes, jobs, dailyAt(tick), tick, tick + 1, 1, env);
        const [atTick, atEnd] = [await beforeTick, await perMaster(masters)];
        results['burst-cluster'] = [
          { ...row, masters: masters.length, registration: masterDeltas(atSpawn, atTick), burst: masterDeltas(atTick, atEnd), loadAtStart, loadAtEnd: loadAverage(), cores: os.cpus().length },
        ];
      } catch (error) {
        log(`burst-cluster FAILED: ${String((error as Error).message).slice(0, 300)}`);
        results['burst-cluster'] = [{ store: 'redis', processes, jobs, error: String((error as Error).message).slice(0, 300), loadAtStart, loadAtEnd: loadAverage(), cores: os.cpus().length }];
      }
    } finally {
      for (const master of masters) master.disconnect();
      await cluster.stop();
    }
  },
  async 'every-10s'(results) {
    results['every-10s'] = [];
    const jobs = D.fleetJobs;
    await withPrivateServers(async (servers) => {
      const env = { REDIS_URL: servers.redis, DATABASE_URL: servers.postgres };
      // One, two and three instances on each store: planning is shared out by partition, so each instance's planner CPU should fall as instances are added.
      for (const [store, processes] of fleetRuns) {
        // The window starts on a tick once every process has registered; its length is a whole number of periods.
        const windowStart = Math.ceil((Date.now() + 25_000) / 10_000) * 10_000;
        const windowEnd = windowStart + D.fleetSeconds * 1000;
        log(`every-10s ${store} (${processes} process${processes > 1 ? 'es' : ''}, ${jobs.toLocaleString('en-US')} jobs, ${D.fleetSeconds} s)`);
        try {
          results['every-10s'].push(await fleetRun(store, processes, jobs, '*/10 * * * * *', windowStart, windowEnd, D.fleetSeconds / 10, env));
        } catch (error) {
          log(`every-10s ${store} FAILED: ${String((error as Error).message).slice(0, 300)}`);
          results['every-10s'].push({ store, processes, jobs, error: String((error as Error).message).slice(0, 300) });
        }
      }
    });
  },
  async footprint(results) {
    log('footprint (installs the peers from the registry)');
    const [r] = await runScenario(scenario('footprint'), { timeoutMs: 600_000 });
    results.footprint = r as Record<string, unknown>;
  },
};

async function main(): Promise<void> {
  if (argv.includes('--render')) {
    // Re-renders RESULTS.md and lag.svg from results.json, without measuring anything.
    const saved = JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results;
    writeFileSync(`${ROOT}bench/RESULTS.md`, renderMarkdown(saved));
    writeFileSync(`${ROOT}bench/lag.svg`, renderSvg(saved));
    return;
  }
  // `--no-build`: dist/ is already built (two runs at once must not rebuild it under each other).
  if (!argv.includes('--no-build')) {
    log('npm run build');
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const previous: Results = only !== undefined && existsSync(RESULTS_JSON) ? (JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results) : {};
  const results: Results = { ...previous, quick, lagWarmUpSeconds: D.lagWarmUpSeconds, only: only !== undefined || previous.only === true, system: await systemInfo() };
  const started = Date.now();
  for (const [name, run] of Object.entries(scenarios)) {
    if (only !== undefined && !only.has(name)) continue;
    try {
      await run(results);
      (results.measuredAt ??= {})[name] = new Date().toISOString();
    } catch (error) {
      log(`${name} FAILED: ${String((error as Error).message).slice(0, 500)}`);
      (results.failures ??= {})[name] = String((error as Error).message).slice(0, 500);
    }
  }
  results.durationS = (Date.now() - started) / 1000;
  writeFileSync(RESULTS_JSON, `${JSON.stringify(results, null, 1)}\n`);
  writeFileSync(`${ROOT}bench/RESULTS.md`, renderMarkdown(results));
  writeFileSync(`${ROOT}bench/lag.svg`, renderSvg(results));
  log(`done in ${results.durationS.toFixed(0)} s: bench/RESULTS.md, bench/lag.svg, bench/results.json`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

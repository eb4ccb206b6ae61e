/** The scale scenarios' sections of bench/RESULTS.md: scale-idle (with its before/after comparison), burst, burst-cluster, every-10s. */
import { f, kb, type Results } from './report.js';
import { percentile } from './stats.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const PER = 100_000;
/** % of one core over a window. */
const pct = (w: any): number | undefined => (w === undefined ? undefined : w.cpuMs / w.seconds / 10);
const serverPct = (w: any): number | undefined => (w?.serverCpuMs === undefined ? undefined : w.serverCpuMs / w.seconds / 10);
const per100k = (value: number | undefined, jobs: number): number | undefined => (value === undefined ? undefined : (value * PER) / jobs);
const name = (row: any): string => (row.lib === 'bullmq' ? `BullMQ (${row.store})` : `tickwork ${row.store}`);

function grid(head: string[], rows: string[][]): string {
  return `| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|\n${rows.map((row) => `| ${row.join(' | ')} |`).join('\n')}\n\n`;
}

function idleSection(list: any[] | undefined, comparison: any[] | undefined): string {
  let out = '## Scale: registered jobs, idle\n\n';
  out +=
    'Yearly jobs (`0 0 1 1 *`) registered in one instance on each store, the stores private servers the bench starts (a Redis and a PostgreSQL cluster of its own, fsync off, on free ports: their CPU is this scenario\'s alone, and a million jobs\' scripts do not hold the shared servers). ' +
    'register()+start() = from the first `register()` until the instance has planned once (`health()`: planner, `lastPlanAt` set): every job written to the store and loaded by the planner. Heap and RSS per job after GC. ' +
    `CPU of the instance (process.cpuUsage) and of the store's server (Redis \`INFO cpu\`; Postgres: its postmaster and children in /proc) over the first 20 s after that, and over 20 s once settled (V8's memory-reducer GCs done, as in Idle, waiting at most ${list?.find((row) => row.settleMaxS !== undefined)?.settleMaxS ?? 60} s), as % of one core and per 100,000 jobs (the figure ÷ jobs × 100,000). ` +
    'Restart: a new process registers the same jobs on the same store (a deploy that changes nothing): time until it has planned, and what the store did (Redis: commands run, write commands among them, `INFO commandstats`; Postgres: rows read and rows written in the schema\'s tables, `pg_stat_user_tables`). ' +
    'BullMQ: one `upsertJobScheduler()` per job and a `Worker`, 100,000 jobs (it registers about 2,000 a second here), its CPU also per 100,000 jobs.\n\n';
  if (list === undefined) return `${out}not run\n\n`;
  const head = ['figure', ...list.map(name)];
  const cell = (fn: (row: any) => string): string[] => list.map((row) => (row.error !== undefined ? `failed: ${String(row.error).slice(0, 80)}` : fn(row)));
  const rows: string[][] = [
    ['jobs', ...cell((r) => f(r.jobs, 0))],
    ['register() + start() until planned (s)', ...cell((r) => f(r.readyMs / 1000, 1))],
    ['〃 instance CPU per job (µs)', ...cell((r) => (r.readyCpuMs === undefined ? '—' : f((r.readyCpuMs * 1000) / r.jobs, 1)))],
    ['〃 store server CPU per job (µs)', ...cell((r) => (r.readyServerCpuMs === undefined ? '—' : f((r.readyServerCpuMs * 1000) / r.jobs, 1)))],
    ['heap per job', ...cell((r) => kb(r.heapPerJob))],
    ['RSS per job', ...cell((r) => kb(r.rssPerJob))],
    ['instance CPU, first 20 s (% of a core)', ...cell((r) => f(pct(r.first), 2))],
    ['〃 per 100,000 jobs', ...cell((r) => f(per100k(pct(r.first), r.jobs), 3))],
    ['store server CPU, first 20 s (%)', ...cell((r) => f(serverPct(r.first), 2))],
    ['〃 per 100,000 jobs', ...cell((r) => f(per100k(serverPct(r.first), r.jobs), 3))],
    ['instance CPU, settled (% of a core)', ...cell((r) => f(pct(r.idle), 2))],
    ['〃 per 100,000 jobs', ...cell((r) => f(per100k(pct(r.idle), r.jobs), 3))],
    ['store server CPU, settled (%)', ...cell((r) => f(serverPct(r.idle), 2))],
    ['〃 per 100,000 jobs', ...cell((r) => f(per100k(serverPct(r.idle), r.jobs), 3))],
    ['settled after (s)', ...cell((r) => f(r.settledAfterS, 0))],
    ['restart, unchanged jobs: until planned (s)', ...cell((r) => (r.restart === undefined ? '—' : f(r.restart.readyMs / 1000, 1)))],
    ['restart: instance CPU per job (µs)', ...cell((r) => (r.restart?.readyCpuMs === undefined ? '—' : f((r.restart.readyCpuMs * 1000) / r.jobs, 1)))],
    ['restart: store server CPU per job (µs)', ...cell((r) => (r.restart?.readyServerCpuMs === undefined ? '—' : f((r.restart.readyServerCpuMs * 1000) / r.jobs, 1)))],
    ['restart: store writes (Redis commands / Postgres rows)', ...cell((r) => (r.restart?.storeOps === undefined ? '—' : f(r.restart.storeOps.writes, 0)))],
    ['restart: store reads (Redis commands / Postgres rows)', ...cell((r) => (r.restart?.storeOps === undefined ? '—' : f(r.restart.storeOps.reads, 0)))],
  ];
  out += grid(head, rows);
  for (const row of list) {
    if (Array.isArray(row.idle?.sliceCpuMs)) out += `${name(row)} settled CPU per 1 s slice (ms): ${(row.idle.sliceCpuMs as number[]).map((v) => f(v, 1)).join(', ')}\n\n`;
  }
  if (comparison !== undefined && comparison.length > 0) {
    out += '**Before and after** the idle fixes (one ready-runs poll per idle heartbeat, not two; the Postgres pool\'s connections kept 60 s, not re-opened each heartbeat; the planner\'s due times worked out page by page), one build after the other in the same run, same job count, same private servers:\n\n';
    out += grid(
      ['store', 'build', 'jobs', 'until planned (s)', 'instance CPU first 20 s (%)', 'server first 20 s (%)', 'instance CPU settled (%)', 'server settled (%)'],
      comparison.map((r) =>
        r.error !== undefined
          ? [r.store, r.build, f(r.jobs, 0), `failed: ${String(r.error).slice(0, 80)}`, '', '', '', '']
          : [r.store, r.build, f(r.jobs, 0), f(r.readyMs / 1000, 1), f(pct(r.first), 2), f(serverPct(r.first), 2), f(pct(r.idle), 2), f(serverPct(r.idle), 2)],
      ),
    );
  }
  return out;
}

/** tickwork on Redis and BullMQ at the same job count, round by round, and each figure's median over the rounds. */
function versusSection(list: any[] | undefined): string {
  if (list === undefined || list.length === 0) return '';
  const figures: [string, (r: any) => number | undefined][] = [
    ['until planned (s)', (r) => r.readyMs / 1000],
    ['instance CPU, first 20 s (ms)', (r) => r.first?.cpuMs],
    ['〃 main thread (ms)', (r) => r.first?.mainThreadCpuMs],
    ['server CPU, first 20 s (ms)', (r) => r.first?.serverCpuMs],
    ['instance CPU, settled 20 s (ms)', (r) => r.idle?.cpuMs],
    ['〃 main thread (ms)', (r) => r.idle?.mainThreadCpuMs],
    ['server CPU, settled 20 s (ms)', (r) => r.idle?.serverCpuMs],
    ['full GCs in the two windows', (r) => (r.first === undefined ? undefined : r.first.fullGcs + (r.idle?.fullGcs ?? 0))],
  ];
  const ok = list.filter((r) => r.error === undefined);
  const median = (lib: string, fn: (r: any) => number | undefined): number | undefined => {
    const values = ok.filter((r) => r.lib === lib).map(fn).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? undefined : percentile(values.sort((a, b) => a - b), 50);
  };
  const rounds = [...new Set(list.map((r) => r.round as number))];
  const head = ['figure', 'tickwork median', 'BullMQ median', 'ratio', ...rounds.flatMap((n) => [`round ${n + 1} tickwork`, `BullMQ`])];
  const row = (label: string, fn: (r: any) => number | undefined): string[] => {
    const [t, b] = [median('tickwork', fn), median('bullmq', fn)];
    const digits = label.startsWith('full') ? 0 : 1;
    const cells = rounds.flatMap((n) =>
      ['tickwork', 'bullmq'].map((lib) => {
        const r = list.find((x) => x.round === n && x.lib === lib);
        return r === undefined ? '—' : r.error !== undefined ? 'failed' : f(fn(r), digits);
      }),
    );
    return [label, f(t, digits), f(b, digits), t === undefined || b === undefined || b === 0 ? '—' : `${f(t / b, 2)}×`, ...cells];
  };
  const jobs = ok[0]?.jobs;
  const loads = list.map((r) => r.load).filter((v): v is number => typeof v === 'number');
  let out = `**tickwork beside BullMQ**, ${f(jobs, 0)} jobs each on the same private Redis, ${rounds.length} rounds taking turns to go first (one 20 s window holds 10-40 ms of either library's CPU, so where a GC or the box's other work falls moves a single run by as much as the difference; the medians are the comparison). CPU per 20 s; load (1 min) after each run ${loads.length === 0 ? '—' : `${f(Math.min(...loads), 2)}–${f(Math.max(...loads), 2)}`}:\n\n`;
  out += grid(head, figures.map(([label, fn]) => row(label, fn)));
  return out;
}

function fleetTable(list: any[]): string {
  return grid(
    ['store', 'instances', 'jobs', 'expected runs', 'missed', 'duplicates', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)', 'last run created (ms after its tick)', 'planner CPU (% of a core; partitions planned)', 'other instances\' CPU (%)', 'store server CPU (%)', 'load (1 min, start → end)'],
    list.map((r) => {
      if (r.error !== undefined) return [r.store, f(r.processes, 0), f(r.jobs, 0), `failed: ${String(r.error).slice(0, 80)}`, '', '', '', '', '', '', '', '', '', ''];
      const planners = (r.instances as any[]).filter((i) => i.planner);
      const others = (r.instances as any[]).filter((i) => !i.planner);
      return [
        r.store,
        f(r.processes, 0),
        f(r.jobs, 0),
        f(r.expected, 0),
        f(r.missed, 0),
        f(r.duplicates, 0),
        f(r.p50, 0),
        f(r.p99, 0),
        f(r.max, 0),
        r.created === undefined ? '—' : f(r.created.max, 0),
        planners.map((i) => (i.partitions === undefined ? f(i.cpuPct, 1) : `${f(i.cpuPct, 1)} (${f(i.partitions, 0)})`)).join(' / ') || '—',
        others.map((i) => f(i.cpuPct, 1)).join(' / ') || '—',
        r.serverCpuPct === undefined ? '—' : f(r.serverCpuPct, 1),
        r.load === undefined ? '—' : `${f(r.load[0], 1)} → ${f(r.load[1], 1)}`,
      ];
    }),
  );
}

function burstSection(list: any[] | undefined): string {
  let out = '## Scale: top-of-the-hour burst\n\n';
  out +=
    'Jobs that all share one tick, as `0 * * * *` jobs do at the top of an hour, driven on the real clock: each job\'s schedule is a daily 6-field cron expression for one whole second a minute or two ahead, registered by every instance (3 processes on Redis and on Postgres, one on the memory store), on the private servers. ' +
    'Lag = handler start − the tick; lag max = from the tick until every handler had started; missed = jobs whose run had not started when the instances stopped waiting (each once 5 s had passed without a handler start or a run created by its planner, or 60 s after the tick), duplicates = a job run twice. ' +
    'Last run created = when the planners\' last `run:created` of the tick came (negative: before the tick; runs are planned ahead of their tick, by as long as planning the last large tick took, and the burst is the first: its planners have not learned yet). ' +
    'CPU per instance over the tick, from 500 ms before it until its handlers stopped starting; "planner" is an instance holding planner leases (the partitions it planned in brackets); the store server\'s CPU (private server: Redis `INFO cpu`, Postgres its processes) over the same span. A CPU near 100 % is one core busy throughout. Load = the machine\'s 1-minute load average when the instances were started and when they were done (2 cores, shared).\n\n';
  if (list === undefined) return `${out}not run\n\n`;
  out += fleetTable(list);
  if (list.some((r) => r.missed > 0)) {
    out += '_Missed runs here are runs still waiting when the instances stopped waiting, not runs lost (duplicates stay 0: run IDs are deterministic)._\n\n';
  }
  return out;
}

function clusterSection(list: any[] | undefined): string {
  if (list === undefined) return '';
  let out = '## Scale: burst on a Redis Cluster\n\n';
  out +=
    'The burst above with 3 instances on a local 3-master Redis Cluster (no replicas, no persistence; the one the tests start, test/integration/redis-cluster.ts), the store\'s default 12 partitions: each partition\'s keys carry it in their hash tag, 4 partitions per master. ' +
    'Commands per master = its `INFO commandstats` calls, summed (commands inside scripts included), from 500 ms before the tick until every instance had stopped (the burst), and before that from the instances\' spawn (registration, loading, planning ahead); the ratio is the busiest master\'s over the quietest\'s (issue 20\'s bound: 2). Server CPU per master from `INFO cpu`. Other figures as in the burst.\n\n';
  for (const r of list) {
    out += `_Load average ${r.loadAtStart} at the start and ${r.loadAtEnd} at the end (1, 5, 15 min; the run's own 3 instances and 3 masters among it), ${f(r.cores, 0)} cores._\n\n`;
    if (r.error !== undefined) {
      out += `failed: ${String(r.error).slice(0, 200)}\n\n`;
      continue;
    }
    out += fleetTable([r]);
    const phase = (label: string, p: any): string[] => [label, (p.commands as number[]).map((n) => f(n, 0)).join(' / '), `${Number(p.busiestOverQuietest).toFixed(2)}×`, (p.cpuMs as number[]).map((n) => f(n, 0)).join(' / ')];
    out += grid(['phase', 'commands per master', 'busiest ÷ quietest', 'server CPU per master (ms)'], [phase('burst (tick − 500 ms until every instance stopped)', r.burst), phase('registration and loading (spawn until tick − 500 ms)', r.registration)]);
    if (r.burst.top !== undefined) out += `Commands run most in the burst, all masters: ${Object.entries(r.burst.top as Record<string, number>).map(([command, calls]) => `${command} ${f(calls, 0)}`).join(', ')}.\n\n`;
  }
  return out;
}

function fleetSection(list: any[] | undefined): string {
  let out = '## Scale: 10,000 jobs every 10 seconds\n\n';
  out +=
    '10,000 jobs on `*/10 * * * * *` (a 10,000-run burst every 10 s) registered by each instance, measured over a window of whole ticks (its length: expected runs ÷ jobs × 10 s) after the first ticks have fired (warm-up), on the private servers; one, two and three instances on each store, in one run. Planning is shared out by partition (the stores\' default 12, unless the heading says otherwise): each instance plans the jobs of the partitions it holds (in brackets after its CPU), so planner CPU per instance should fall as instances are added. Figures as in the burst.\n\n';
  out +=
    'Runs are created ahead of their tick (negative "last run created") once the planners have learnt how long a tick takes to plan; the lag is then the claim, the handler and the fenced finish. ' +
    'What bounds it is CPU: instances and store server together spent 190-250 µs per run on Redis and 350-470 µs on Postgres in a run of 2026-11-28 12:23 (CPU over the window ÷ runs; at 12:36: 243 µs and 484 µs with 3 instances), i.e. 2.5 s and 4.7 s of CPU per 10,000-run tick on 3 instances, on 2 cores that other sessions shared. Lag p99 on 3 instances was 1.6 s (Redis) and 1.3 s (Postgres) at load 3-6, 0.99 s and 1.09 s at load 1.1-1.5 (12:36, 30 s windows), 0.95 s and 1.06 s in the 120 s windows below (12:59-13:09, load 0.3-2.2). ' +
    'On Postgres the server\'s functions spent (pg_stat_user_functions, 3 instances, 12:08 run) 207 µs per `schedule_run` call (done ahead of the tick), 185 µs per `finish_attempt` (91 µs of it pruning history, `settle_history`) and 57 µs per `claim_run`, of which there are 2.3 per run (every instance claims every run it registered; the claims that find the run taken are the cheap ones).\n\n';
  return list === undefined ? `${out}not run\n\n` : out + fleetTable(list);
}

/** every-10s on 3 instances with several partition counts (BENCH_PARTITIONS), one run each, one after the other. */
function partitionSection(list: any[] | undefined): string {
  if (list === undefined) return '';
  let out = '## Scale: the partition count\n\n';
  out +=
    'every-10s (10,000 jobs on `*/10 * * * * *`, 3 instances, 30 s windows) with the stores\' partition count set by BENCH_PARTITIONS, one count after the other on the same private servers. ' +
    'Planned = the partitions each instance held at the window\'s start (`ceil(partitions / instances)` each, so 4 partitions leave the third instance nothing to plan); CPU per instance over the window (s); the rest as in the burst. ' +
    'Idle cost of the leases (3 instances, 100 jobs each, `leaseMs` 3 s, private Redis, 10 s): 6,196 / 6,756 / 7,656 / 8,976 / 11,616 Redis commands (`INFO commandstats`, those inside scripts included) with 1 / 4 / 12 / 24 / 48 partitions: about 11 more per partition per second, at a heartbeat a second; heartbeats are ten times rarer at the default `leaseMs` (30 s). Measured 2026-11-28 12:05 UTC by a probe outside `npm run bench`.\n\n';
  return (
    out +
    grid(
      ['store', 'partitions', 'planned per instance', 'lag p50 (ms)', 'lag p99 (ms)', 'last run created, per tick (ms after it)', 'instance CPU (s each)', 'store server CPU (%)', 'load (1 min, start → end)'],
      list.map((r) =>
        r.error !== undefined
          ? [r.store, f(r.partitionCount, 0), `failed: ${String(r.error).slice(0, 80)}`, '', '', '', '', '', '']
          : [
              r.store,
              f(r.partitionCount, 0),
              (r.instances as any[]).map((i) => f(i.partitions ?? 0, 0)).join(' / '),
              f(r.p50, 0),
              f(r.p99, 0),
              Object.values(r.perTick ?? {}).map((t: any) => f(t.lastCreated, 0)).join(' / '),
              (r.instances as any[]).map((i) => f(i.cpuMs / 1000, 1)).join(' / '),
              r.serverCpuPct === undefined ? '—' : f(r.serverCpuPct, 1),
              r.load === undefined ? '—' : `${f(r.load[0], 1)} → ${f(r.load[1], 1)}`,
            ],
      ),
    )
  );
}

export function scaleSections(r: Results): string {
  if (r['scale-idle'] === undefined && r.burst === undefined && r['every-10s'] === undefined && r['burst-cluster'] === undefined) return '';
  const run = r.scaleRun;
  const note =
    run === undefined
      ? ''
      : `_The scale scenarios were run ${run.started}, load average ${run.loadAtStart} at the start and ${run.loadAtEnd} at the end (1, 5, 15 min); ${run.note}.${run.counts === undefined ? '' : ` Job counts: ${'`'}${String(run.counts)}${'`'}.`}_\n\n`;
  return (
    note +
    idleSection(r['scale-idle'], r['scale-idle-comparison']) +
    versusSection(r['scale-idle-versus']) +
    burstSection(r.burst) +
    clusterSection(r['burst-cluster']) +
    fleetSection(r['every-10s']) +
    partitionSection(r['every-10s-partitions'])
  );
}

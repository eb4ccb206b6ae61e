/** Turns the collected results into bench/RESULTS.md and the lag chart bench/lag.svg (hand-written SVG). */
import type { SystemInfo } from './sysinfo.js';
import { budgeted, BUDGET_EXEMPT, BUNDLE_BUDGET_BYTES, BUNDLE_TARGET_BYTES, type PackageSize } from './footprint.js';
import { scaleSections } from './report-scale.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Results {
  quick?: boolean;
  system?: SystemInfo;
  durationS?: number;
  failures?: Record<string, string>;
  [scenario: string]: any;
}

export const f = (v: unknown, digits = 1): string => (typeof v === 'number' && Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 }) : '—');
const ratio = (a: unknown, b: unknown): string => (typeof a === 'number' && typeof b === 'number' && b !== 0 && Number.isFinite(a / b) ? `${f(a / b, 2)}×` : '—');
const mark = (ok: boolean | undefined): string => (ok === undefined ? '' : ok ? '✅ met' : '❌ not met');
const NAMES: Record<string, string> = { bullmq: 'BullMQ', pgboss: 'pg-boss', settimeout: 'bare setTimeout (floor)', 'tickwork-otel': 'tickwork, telemetry on' };
const display = (lib: string): string => NAMES[lib] ?? lib;
export const kb = (bytes: unknown): string => (typeof bytes === 'number' ? `${f(bytes / 1024, 2)} KB` : '—');

interface Row {
  figure: string;
  tickwork: string;
  peer: string;
  peerValue: string;
  ratio: string;
  target: string;
}

function table(rows: Row[]): string {
  const head = '| figure | tickwork | peer | peer value | tickwork ÷ peer | target |\n|---|---|---|---|---|---|\n';
  return head + rows.map((r) => `| ${r.figure} | ${r.tickwork} | ${r.peer} | ${r.peerValue} | ${r.ratio} | ${r.target} |`).join('\n') + '\n';
}

/** Rows comparing tickwork's value with each peer's. */
function compare(figure: string, tw: unknown, peers: [string, unknown, string?][], fmt: (v: unknown) => string, target = ''): Row[] {
  if (peers.length === 0) return [{ figure, tickwork: fmt(tw), peer: '—', peerValue: '—', ratio: '—', target }];
  return peers.map(([peer, value, note], i) => ({
    figure: i === 0 ? figure : '〃',
    tickwork: i === 0 ? fmt(tw) : '〃',
    peer,
    peerValue: note ?? fmt(value),
    ratio: note === undefined ? ratio(tw, value) : '—',
    target: i === 0 ? target : '',
  }));
}

/** Under the store lag tables: what the `run:created` and one-process rows show. */
const CREATED_NOTE =
  '_A run\'s lag on a store is two steps: the planner has the store create it, then an instance claims and starts it. tickwork creates an `Allow` job\'s run 200 ms before its tick (`PLAN_AHEAD_MS`), ready at the tick, so only the claim is left at the tick. The `run:created` rows time the planner\'s side, from the tick until the planner has read the store\'s answer: negative, since that is before the tick. One process alone does both steps and loses no claim race, so its row shows what three processes add._\n\n';

function lagSection(title: string, list: any[] | undefined, targetP99: (store: string) => number, cpuVsCroner: boolean): string {
  if (list === undefined) return `### ${title}\n\nnot run\n\n`;
  let out = `### ${title}\n\n`;
  let createdExplained = false;
  const byStore = new Map<string, any[]>();
  for (const r of list) byStore.set(r.store, [...(byStore.get(r.store) ?? []), r]);
  for (const [store, rows] of byStore) {
    // tickwork's figures are those with the most processes; a one-process run beside them is a row of its own.
    const tw = rows.filter((r) => r.lib === 'tickwork').sort((a, b) => b.processes - a.processes)[0];
    const peers = rows.filter((r) => r.lib !== 'tickwork');
    if (tw === undefined) continue;
    const alone = tw.processes > 1 ? rows.find((r) => r.lib === 'tickwork' && r.processes === 1) : undefined;
    const target = targetP99(store);
    const minuteNote = (p: any) => (p.periodMs === 60_000 ? ' (minute ticks)' : '');
    const peerList = (key: string): [string, unknown, string?][] => peers.map((p) => [`${display(p.lib)}${minuteNote(p)}`, p[key]]);
    const rowsOut: Row[] = [
      ...compare('lag p50 (ms)', tw.p50, peerList('p50'), (v) => f(v, 2)),
      ...compare('lag p99 (ms)', tw.p99, peerList('p99'), (v) => f(v, 2), `≤ ${target} ms: ${mark(tw.p99 <= target)} (${f(tw.p99, 2)})`),
      ...compare('lag max (ms)', tw.max, peerList('max'), (v) => f(v, 2)),
      ...compare('missed (of expected)', tw.missed, peerList('missed'), (v) => f(v, 0), `0: ${mark(tw.missed === 0)} (${tw.missed} of ${tw.expected})`),
      ...compare('duplicates', tw.duplicates, peerList('duplicates'), (v) => f(v, 0), `0: ${mark(tw.duplicates === 0)}`),
      ...compare('CPU per 1,000 fires (ms, all processes)', tw.cpuMsPer1000, peerList('cpuMsPer1000'), (v) => f(v, 1),
        cpuVsCroner ? (() => { const c = peers.find((p) => p.lib === 'croner'); return c === undefined ? '' : `≤ croner's: ${mark(tw.cpuMsPer1000 <= c.cpuMsPer1000)}`; })() : ''),
    ];
    const otel = peers.find((p) => p.lib === 'tickwork-otel');
    if (otel !== undefined) {
      rowsOut.push(...compare('CPU per fire, telemetry on ÷ off (same run)', ratio(otel.cpuMsPer1000, tw.cpuMsPer1000), [], String));
    }
    if (tw.warmUpCpuMsPer1000 !== undefined) {
      rowsOut.push(...compare('CPU per 1,000 fires during the warm-up (ms, all processes)', tw.warmUpCpuMsPer1000, peerList('warmUpCpuMsPer1000'), (v) => f(v, 1)));
    }
    if (tw.serverCpuMsPer1000 !== undefined) {
      rowsOut.push(...compare(`${store === 'redis' ? 'Redis' : 'Postgres'} server CPU per 1,000 fires (ms)`, tw.serverCpuMsPer1000, peerList('serverCpuMsPer1000'), (v) => f(v, 1)));
    }
    const p50p99 = (v: any) => `${f(v.p50, 2)} / ${f(v.p99, 2)}`;
    if (tw.created !== undefined) rowsOut.push(...compare('tick → `run:created` in the planner, p50 / p99 (ms)', p50p99(tw.created), [], String));
    if (alone !== undefined) {
      rowsOut.push(...compare('tickwork alone (1 process): lag p50 / p99 (ms)', p50p99(alone), [], String));
      if (alone.created !== undefined) rowsOut.push(...compare('tickwork alone (1 process): tick → `run:created`, p50 / p99 (ms)', p50p99(alone.created), [], String));
    }
    out += `**${store} store**, ${tw.processes} process${tw.processes > 1 ? 'es' : ''}, ${tw.jobs} jobs, ${tw.expected} expected fires\n\n${table(rowsOut)}\n`;
    // Said once, under the first store that has the rows it explains.
    if (tw.created !== undefined && !createdExplained) {
      out += CREATED_NOTE;
      createdExplained = true;
    }
    if (peers.some((p) => p.periodMs === 60_000)) {
      out += '_pg-boss has no seconds field: its schedules have minute granularity, so it was measured on one minute tick of 100 jobs (100 expected fires), not on 20 one-second ticks; its lag comes from its cron timekeeper (due schedules are looked for on an interval: `cronWorkerIntervalSeconds` 5 s and `cronMonitorIntervalSeconds` 30 s by default) and from worker polling (`pollingIntervalSeconds`, 2 s by default), all defaults kept, its CPU per 1,000 fires by a minute of polling for only 100 fires. pg-boss passes no nominal time: its tick is the minute the handler started in._\n\n';
      for (const p of peers.filter((peer) => peer.periodMs === 60_000 && peer.duplicates > 0)) {
        out += `_In this run ${display(p.lib)} ran ${p.duplicates} of its ${p.expected} fires twice in the same minute (lag quantiles 0–100 %, every 10 %: ${(p.quantiles as number[]).filter((_, i) => i % 20 === 0).map((q) => f(q / 1000, 1)).join(', ')} s), with three processes on one database and its defaults; the cause was not looked into._\n\n`;
      }
    }
  }
  return out;
}

export function renderMarkdown(r: Results): string {
  const s = r.system;
  let out = `# tickwork benchmarks\n\nGenerated by \`npm run bench\`${r.quick ? ' **(--quick mode: short durations, not the reference figures)**' : ''} on ${s?.date ?? '?'} in ${f(r.durationS, 0)} s.\n\n`;
  out += `| | |\n|---|---|\n| machine | ${s?.cpu} × ${s?.cores} cores, ${s?.memoryGb} GB, ${s?.os} |\n| Node | ${s?.node} |\n| Redis | ${s?.redis} |\n| PostgreSQL | ${s?.postgres} |\n| load average at start | ${s?.load} |\n\n`;
  out += '> **Noise.** The machine is shared (2 cores, other test suites running at the same time), so absolute numbers vary from run to run. ' +
    'Compare the **ratios**: tickwork and each peer are measured in the same run, one after the other, each in its own process. ' +
    'Ratios are tickwork ÷ peer: below 1 is better for times, lags, CPU and memory; above 1 is better for rates.\n\n';
  out += 'Peers as their docs recommend for recurring jobs: croner `new Cron()`, node-cron `schedule()`, BullMQ `queue.upsertJobScheduler()` + `Worker`, pg-boss `schedule()` + `work()`. ' +
    'Every library runs as its users run it: the peers from their published JavaScript, tickwork from its build (`npm run build`, imported as `tickwork`), ' +
    'except the pure functions the skip and cron-maths scenarios time directly (`plan()`, `compileSchedule()`), which are not exported and run from the source.\n\n';
  if (r.measuredAt !== undefined) {
    out += `Scenarios finished at (UTC): ${Object.entries(r.measuredAt as Record<string, string>).map(([k, v]) => `${k} ${v.slice(0, 16).replace('T', ' ')}`).join(' · ')}${r.only ? ' (some re-run alone with `--only`: compare ratios within a scenario, not across)' : ''}.\n\n`;
  }
  if (r.failures !== undefined && Object.keys(r.failures).length > 0) out += `**Failed scenarios:** ${Object.entries(r.failures).map(([k, v]) => `${k}: ${v}`).join('; ')}\n\n`;

  out += '## Fire lag\n\nlag = handler start − nominal tick time (sub-millisecond clock). 100 jobs firing every second, ' + (r.lagWarmUpSeconds > 0 ? `measured after ${r.lagWarmUpSeconds} s of firing, the same for every library: the figures are a running scheduler's, not those of its first seconds, while V8 still compiles its hot code (a job that fires once a second calls it 100 times a second, so this takes tens of seconds; the warm-up's CPU is a row of its own); ` : 'measured from the first tick; ') + 'missed = expected (job, tick) pairs never run; duplicates = a (job, tick) pair run twice (across all processes). ' +
    'croner passes no nominal time to its callback: its tick is taken as the nearest whole second. ' +
    'CPU per 1,000 fires = CPU of the scheduler process(es) over the window ÷ fires × 1,000; the store server\'s CPU over the same window is a row of its own (Redis `INFO cpu`; Postgres: its processes in /proc, with the CPU of the backends that exited). ' +
    '"bare setTimeout (floor)" is no scheduler at all: one Node timer per job aimed at the next whole second, re-armed on each fire; it is what this machine allows any in-process scheduler.\n\n![lag distribution](lag.svg)\n\n';
  out += lagSection('Memory store (one process)', r['fire-lag'], () => 2, true);
  out += lagSection('Redis and Postgres stores (three processes on one store, and tickwork alone)', r['fire-lag-stores'], (store) => (store === 'redis' ? 15 : 25), false);

  out += '## Throughput\n\nAs many no-op runs as possible: 64 concurrent producers (tickwork `trigger()`, BullMQ `queue.add()`, pg-boss `send()`), at most 2,000 runs outstanding, one process, `maxConcurrentRuns` unlimited (BullMQ Worker concurrency 100; pg-boss `work()` with batchSize 500, polling every 0.5 s). Completed runs counted over the window after a 2 s warm-up. Store CPU = Redis `INFO cpu` delta / Postgres processes\' CPU from /proc, with that of the backends that exited (100 % = one core).\n\n';
  if (r.throughput !== undefined) {
    const tp = r.throughput as any[];
    const targets: Record<string, number> = { memory: 50_000, redis: 5_000, postgres: 2_000 };
    const rows: Row[] = [];
    for (const store of ['memory', 'redis', 'postgres']) {
      const tw = tp.find((x) => x.lib === 'tickwork' && x.store === store);
      if (tw === undefined) continue;
      const peers = tp.filter((x) => x.lib !== 'tickwork' && x.store === store);
      const peerRows: [string, unknown, string?][] = store === 'memory' ? [['croner / node-cron', undefined, 'n/a: no run records or queue; `trigger()` is a plain function call']] : peers.map((p) => [p.lib, p.runsPerSecond]);
      rows.push(...compare(`${store}: runs/s`, tw.runsPerSecond, peerRows.map(([n, v, note]) => [display(n), v, note] as [string, unknown, string?]), (v) => f(v, 0), `≥ ${f(targets[store], 0)}/s: ${mark(tw.runsPerSecond >= (targets[store] as number))} (${f(tw.runsPerSecond, 0)})`));
      rows.push(...compare(`${store}: client process CPU %`, tw.processCpuPct, store === 'memory' ? [] : peers.map((p) => [display(p.lib), p.processCpuPct]), (v) => f(v, 0)));
      if (store !== 'memory') {
        rows.push(...compare(`${store}: store server CPU %`, tw.serverCpuPct, peers.map((p) => [display(p.lib), p.serverCpuPct]), (v) => f(v, 0)));
        rows.push(...compare(`${store}: server CPU ms per 1,000 runs`, (tw.serverCpuPct * 10) / tw.runsPerSecond * 1000, peers.map((p) => [display(p.lib), (p.serverCpuPct * 10) / p.runsPerSecond * 1000]), (v) => f(v, 1)));
      }
    }
    out += table(rows) + '\n';
  } else out += 'not run\n\n';

  out += '## Allocation per fire\n\n100 jobs firing every second, memory store, one process per library: bytes allocated per fire, objects already collected included (V8\'s sampling heap profiler, one sample per 128 bytes), over 10 s after the same 40 s warm-up as the fire-lag scenario, and measured apart from it (the profiler costs CPU). What the garbage collector has to deal with for each run; not a target.\n\n';
  if (r.alloc !== undefined) {
    const alloc = r.alloc as any[];
    const tw = alloc.find((x) => x.lib === 'tickwork');
    const peers = alloc.filter((x) => x.lib !== 'tickwork');
    out += table(compare('bytes allocated per fire', tw?.bytesPerFire, peers.map((p) => [display(p.lib), p.bytesPerFire]), (v) => f(v, 0))) + '\n';
  } else out += 'not run\n\n';

  out += '## Idle\n\n100,000 registered yearly jobs (`0 0 1 1 *`), then 20 s of idling. Registration = the 100k `register()` calls + `start()` (croner: constructors; node-cron: `schedule()`). Heap/RSS per job after GC, 1 s after registration. Then settling, reported apart: after a burst of allocation the memory reducer of V8 runs one to three full GCs of the whole heap, 8 to 50 s later depending on the machine\'s load, a one-off cost of the registration, not of idling. Settling lasts at least 20 s, and until a full GC has run and 10 s have passed without another (at most 90 s); the idle window starts after it. croner is measured but runs out of memory at 100,000 jobs (see Registration: ~80 KB of heap per `Cron`).\n\n';
  if (r.idle !== undefined) {
    const idle = r.idle as any[];
    const tw = idle.find((x) => x.lib === 'tickwork');
    const peers = idle.filter((x) => x.lib !== 'tickwork');
    const pl = (key: string): [string, unknown, string?][] => peers.map((p) => [p.lib, p[key], p.error]);
    out += table([
      ...compare('registration time (ms)', tw?.registerMs, pl('registerMs'), (v) => f(v, 0), `< 1,000 ms: ${mark(tw?.registerMs < 1000)} (${f(tw?.registerMs, 0)})`),
      ...compare('CPU while idle (% of a core)', tw?.idleCpuPct, pl('idleCpuPct'), (v) => f(v, 2), `< 0.5 %: ${mark(tw?.idleCpuPct < 0.5)} (${f(tw?.idleCpuPct, 2)})`),
      ...compare('CPU while settling (% of a core)', tw?.settleCpuPct, pl('settleCpuPct'), (v) => f(v, 2)),
      ...compare('settling time (s)', tw?.settleSeconds, pl('settleSeconds'), (v) => f(v, 0)),
      ...compare('heap per job', tw?.heapPerJob, pl('heapPerJob'), kb),
      ...compare('RSS per job', tw?.rssPerJob, pl('rssPerJob'), kb),
    ]) + '\n';
    for (const x of idle) {
      if (Array.isArray(x.cpuSlicesPct)) out += `${x.lib} idle CPU per 1 s slice (%): ${(x.cpuSlicesPct as number[]).map((v) => f(v, 2)).join(', ')}\n\n`;
    }
  } else out += 'not run\n\n';

  out += '## Skip: restart after 30 million missed minutes\n\nA `* * * * *` job whose cursor is 30,000,000 minutes (57 years) behind. `plan()` timed directly (pure function; first call on a freshly compiled schedule (after warm-up calls with a 3-minute gap in both zones, shown separately), warm = mean of 10,000 calls), and a restarted scheduler on the memory store with a FakeClock jumped 30 M minutes: `start()` to the first handler call.\n\n';
  if (r.skip !== undefined) {
    const sk = r.skip as any;
    const rows: Row[] = [];
    const peerNote: [string, unknown, string?][] = [['croner, node-cron, BullMQ, pg-boss', undefined, 'n/a: no persisted cursor; missed ticks are neither detected nor reported']];
    for (const p of sk.plans) rows.push(...compare(`plan() ${p.policy}, ${p.timezone}: warm mean (ms)`, p.meanMs, peerNote, (v) => f(v, 4), `< 1 ms: ${mark(p.meanMs < 1)}`));
    if (typeof sk.warmUpMs === 'number') rows.push(...compare('plan() warm-up: first calls in the process (UTC + New York), 3 missed minutes', sk.warmUpMs, [], (v) => f(v, 3), 'not a target (process warm-up)'));
    for (const p of sk.plans) rows.push(...compare(`plan() ${p.policy}, ${p.timezone}: first call on a new schedule (ms)`, p.coldMs, [], (v) => f(v, 3), `< 1 ms: ${mark(p.coldMs < 1)}`));
    if (sk.years !== undefined) {
      rows.push(...compare('plan(), 3 missed minutes in a year no query has touched yet (ms)', sk.years.coldYearShortGapMs, [], (v) => f(v, 3), 'shows where the cold cost comes from'));
      rows.push(...compare('plan(), 30 M missed minutes ending in an already-touched year (ms)', sk.years.warmYearLongGapMs, [], (v) => f(v, 3), `< 1 ms: ${mark(sk.years.warmYearLongGapMs < 1)}`));
    }
    for (const p of sk.restarts) rows.push(...compare(`restart ${p.policy}: start() → first run (ms)`, p.startToFirstRunMs, [], (v) => f(v, 3), `< 1 ms: ${mark(p.startToFirstRunMs < 1)}`));
    out += table(rows) + '\n';
  } else out += 'not run\n\n';

  out += '## Catch-up\n\nA `CatchUp` job `{ every: \'1s\' }` whose cursor is 100,000 ticks behind, memory store, real clock. Heap after GC sampled every 10 % of the backlog.\n\n';
  if (r['catch-up'] !== undefined) {
    const c = r['catch-up'] as any;
    const note: [string, unknown, string?][] = [['croner, node-cron, BullMQ, pg-boss', undefined, 'n/a: no catch-up of missed ticks (only the next occurrence is scheduled)']];
    const heapGrowth = c.heapPeak - c.heapStart;
    out += table([
      ...compare(`runs/s (${f(c.runs, 0)} runs in ${f(c.ms / 1000, 1)} s)`, c.runsPerSecond, note, (v) => f(v, 0), `≥ 10,000/s: ${mark(c.runsPerSecond >= 10_000)} (${f(c.runsPerSecond, 0)})`),
      ...compare('peak heap growth over the backlog', heapGrowth, [], (v) => `${f((v as number) / 2 ** 20, 2)} MB`, `flat: ${mark(heapGrowth < 5 * 2 ** 20)}`),
    ]);
    out += `\nheap samples (MB): ${[{ runs: 0, heapUsed: c.heapStart }, ...c.heap].map((h: any) => `${f(h.runs, 0)}: ${f(h.heapUsed / 2 ** 20, 1)}`).join(', ')}\n\n`;
  } else out += 'not run\n\n';

  out += '## Cron maths\n\nThe next 100,000 occurrences from 2026-01-01T00:00Z in America/New_York, best of the repetitions. tickwork `compileSchedule().next(t)`, croner `nextRun(date)`, cron-parser `parse(p, { currentDate, tz }).next()`, node-cron `task.getNextRuns(100000)` (node-cron has no "next after t" API: it counts from the current time).\n\n';
  if (r['cron-maths'] !== undefined) {
    const cm = r['cron-maths'] as any;
    const rows: Row[] = [];
    for (const pattern of ['*/5 * * * * *', '0 9 * * 1-5']) {
      const list = cm.results.filter((x: any) => x.pattern === pattern);
      const tw = list.find((x: any) => x.lib === 'tickwork');
      const peers = list.filter((x: any) => x.lib !== 'tickwork');
      const fastest = Math.max(...peers.map((p: any) => p.opsPerSecond));
      rows.push(...compare(`\`${pattern}\` occurrences/s`, tw?.opsPerSecond, peers.map((p: any) => [p.lib, p.opsPerSecond]), (v) => f(v, 0), `faster than every peer: ${mark(tw?.opsPerSecond > fastest)}`));
    }
    out += table(rows) + '\n';
    if (cm.latest !== undefined) {
      out += `tickwork \`latest(t)\` (catch-up look-up; it walks time-zone segments, never missed ticks), µs per call: ${cm.latest.map((l: any) => `${l.schedule} ${f(l.microsPerCall, 2)}`).join('; ')}.\n\n`;
    }
  } else out += 'not run\n\n';

  out += previewSection(r.preview as PreviewRow[] | undefined);

  out += '## Registration\n\n10,000 cron jobs with distinct expressions (`m h * * *`): tickwork `register()` (not started), croner `new Cron(p, { paused: true }, fn)`, node-cron `createTask(p, fn)` (created stopped). Heap = heapUsed delta after GC with every job retained. Each library in its own process, after a 100-job warm-up.\n\n';
  if (r.registration !== undefined) {
    const reg = r.registration as any[];
    const tw = reg.find((x) => x.lib === 'tickwork');
    const peers = reg.filter((x) => x.lib !== 'tickwork');
    const fastest = Math.min(...peers.map((p) => p.ms));
    const smallest = Math.min(...peers.map((p) => p.heapBytes));
    out += table([
      ...compare('time (ms)', tw?.ms, peers.map((p) => [p.lib, p.ms]), (v) => f(v, 1), `faster than every peer: ${mark(tw?.ms < fastest)}`),
      ...compare('heap', tw?.heapBytes, peers.map((p) => [p.lib, p.heapBytes]), (v) => `${f((v as number) / 2 ** 20, 2)} MB`, `smaller than every peer: ${mark(tw?.heapBytes < smallest)}`),
    ]) + '\n';
  } else out += 'not run\n\n';
  return out + footprintSection(r.footprint) + scaleSections(r);
}

interface PreviewRow {
  mode: 'first' | 'cold' | 'zones';
  expression: string;
  zone?: string;
  ms?: number;
  cpuMs?: number;
  reps?: number;
  intlCalls?: number;
  warmMs?: number;
  p99CpuMs?: number;
  maxCpuMs?: number;
  mostCpuZone?: string;
  zones?: number;
  medianMs?: number;
  maxMs?: number;
  slowestZone?: string;
  maxIntlCalls?: number;
  mostCallsZone?: string;
}

function previewSection(rows: PreviewRow[] | undefined): string {
  let out = '## Preview\n\n`nextTicks(expression, { timezone, after: 2026-01-01T00:00Z, count: 10 })` from the built package, each measurement in a fresh process. first = the first call of the process, which includes the one-time start-up of Intl (ICU: locale and time zone data) and of cron-parser that any app pays once; cold = the first call for this expression and zone after one preview of another (`0 12 * * *`, Asia/Tokyo), as in a running app; warm = median of 200 more calls. first and cold are medians over 5 processes each, in wall time and in the CPU time of the process (the target is checked on CPU time: on a loaded machine a call also waits for a core). Intl calls = `Intl.DateTimeFormat` format() calls of the measured call (before the chunked zone reads: 42,735 for `0 0 * 2 5#5` in America/New_York). All zones = the cold call in each zone Intl knows, one after the other. Target: cold ≤ 10 ms.\n\n';
  if (rows === undefined) return `${out}not run\n\n`;
  out += '| expression | zone | first (ms) | cold (ms) | cold CPU (ms) | warm (ms) | Intl calls (cold) |\n|---|---|---|---|---|---|---|\n';
  for (const cold of rows.filter((row) => row.mode === 'cold')) {
    const first = rows.find((row) => row.mode === 'first' && row.expression === cold.expression && row.zone === cold.zone);
    out += `| \`${cold.expression}\` | ${cold.zone} | ${f(first?.ms, 1)} | ${f(cold.ms, 2)} | ${f(cold.cpuMs, 2)} ${mark((cold.cpuMs ?? Infinity) <= 10)} | ${f(cold.warmMs, 3)} | ${f(cold.intlCalls, 0)} |\n`;
  }
  out += '\n| expression | all zones: median cold (ms) | slowest zone, wall (ms) | p99 CPU (ms) | most CPU (ms) | most Intl calls |\n|---|---|---|---|---|---|\n';
  for (const all of rows.filter((row) => row.mode === 'zones')) {
    out += `| \`${all.expression}\` (${f(all.zones, 0)} zones) | ${f(all.medianMs, 2)} | ${f(all.maxMs, 2)} (${all.slowestZone}) | ${f(all.p99CpuMs, 2)} ${mark((all.p99CpuMs ?? Infinity) <= 10)} | ${f(all.maxCpuMs, 2)} (${all.mostCpuZone}) | ${f(all.maxIntlCalls, 0)} (${all.mostCallsZone}) |\n`;
  }
  return `${out}\n`;
}

function footprintSection(footprint: { libs: any[] } | undefined): string {
  let out = '## Footprint\n\nWhat a library costs the app that installs it. Install = every file of the node_modules that `npm install <lib>` writes into an empty project (production dependencies only, no install scripts; apparent sizes): tickwork from its packed tarball, each peer from the registry at the version the bench runs. Bundle = a minimal app (one job registered, started, stopped; tickwork on its default memory store) bundled with esbuild (minified, ESM, platform node); BullMQ and pg-boss are queue clients that need a server, so they have none. `npm run size` measures tickwork alone and holds its budget in CI: ' + kb(BUNDLE_BUDGET_BYTES) + ' for the bundle without luxon, cron-parser\'s date library, which cron-parser (CommonJS) calls while it parses an expression, so that no bundler can leave it out. 1 KB = 1,024 bytes.\n\n';
  if (footprint === undefined) return `${out}not run\n\n`;
  const [tw, ...peers] = footprint.libs;
  const mib = (v: unknown): string => (typeof v !== 'number' ? '—' : v < 2 ** 20 ? kb(v) : `${f(v / 2 ** 20, 2)} MB`);
  const count = (l: any): number => (l.packages as PackageSize[]).filter((p) => !p.name.startsWith('(')).length;
  const bundled = peers.filter((p) => p.bundle !== undefined);
  out += table([
    ...compare('install size', tw.installBytes, peers.map((p) => [`${display(p.lib)} ${p.version}`, p.installBytes]), mib),
    ...compare('packages installed', count(tw), peers.map((p) => [display(p.lib), count(p)]), (v) => f(v, 0)),
    ...compare('minimal app bundled, minified', tw.bundle.bytes, bundled.map((p) => [display(p.lib), p.bundle.bytes]), kb, `≤ ${kb(BUNDLE_TARGET_BYTES)} without ${BUDGET_EXEMPT.join(', ')} (issue 19; CI budget ${kb(BUNDLE_BUDGET_BYTES)}): ${mark(budgeted(tw.bundle) <= BUNDLE_TARGET_BYTES)} (${kb(budgeted(tw.bundle))})`),
    ...compare('minimal app bundled, gzipped', tw.bundle.gzipBytes, bundled.map((p) => [display(p.lib), p.bundle.gzipBytes]), kb),
    ...compare('packed tarball (npm pack)', tw.tarball.bytes, [], kb),
  ]);
  const parts = (sizes: PackageSize[], total: number): string => sizes.map((p) => `${p.name} ${kb(p.bytes)} (${f((p.bytes / total) * 100, 0)} %)`).join(', ');
  out += `\ntickwork ${tw.version}: install ${parts(tw.packages, tw.installBytes)}; tarball unpacked ${kb(tw.tarball.unpackedBytes)} (${Object.entries(tw.tarball.byKind as Record<string, number>).map(([kind, bytes]) => `${kind} ${kb(bytes)}`).join(', ')}); minimal app bundle ${parts(tw.bundle.packages, tw.bundle.bytes)}.\n\n`;
  return out;
}

const COLORS: Record<string, string> = { tickwork: '#d62728', croner: '#1f77b4', 'node-cron': '#2ca02c', bullmq: '#9467bd', pgboss: '#8c564b', settimeout: '#7f7f7f' };

/** The lag distributions as CDFs on a log-scaled lag axis, one line per library and store. */
export function renderSvg(r: Results): string {
  // One line per library and store: tickwork's one-process store runs are in the tables only.
  const series = [...((r['fire-lag'] as any[]) ?? []), ...((r['fire-lag-stores'] as any[]) ?? [])].filter(
    (s) => Array.isArray(s.quantiles) && (s.store === 'memory' || s.processes > 1),
  );
  const W = 940;
  const H = 460;
  const m = { l: 70, r: 290, t: 40, b: 55 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const all = series.flatMap((s) => s.quantiles as number[]).filter((v) => Number.isFinite(v));
  const lo = 0.01;
  const hiExp = Math.ceil(Math.log10(Math.max(10, ...all)));
  const loExp = Math.log10(lo);
  const x = (v: number) => m.l + ((Math.log10(Math.max(lo, v)) - loExp) / (hiExp - loExp)) * pw;
  const y = (q: number) => m.t + ph - q * ph;
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">\n`;
  svg += `<rect width="${W}" height="${H}" fill="white"/>\n`;
  svg += `<text x="${m.l}" y="22" font-size="15" font-weight="bold">Fire lag distribution (CDF): handler start − nominal tick</text>\n`;
  for (let e = loExp; e <= hiExp; e += 1) {
    const xv = x(10 ** e);
    svg += `<line x1="${xv}" y1="${m.t}" x2="${xv}" y2="${m.t + ph}" stroke="#ddd"/>\n`;
    svg += `<text x="${xv}" y="${m.t + ph + 16}" text-anchor="middle">${10 ** e >= 1 ? f(10 ** e, 0) : String(10 ** e)}</text>\n`;
  }
  // p99 and p100 lie 4 px apart: bottom up, each label keeps at least a line's height above
  // the one below it, and a label moved off its gridline gets a leader to it.
  let below = Infinity;
  for (const q of [0, 0.25, 0.5, 0.75, 0.9, 0.99, 1]) {
    const label = Math.min(y(q), below - 13);
    below = label;
    svg += `<line x1="${m.l}" y1="${y(q)}" x2="${m.l + pw}" y2="${y(q)}" stroke="#eee"/>\n<text x="${m.l - 6}" y="${label + 4}" text-anchor="end">p${f(q * 100, 0)}</text>\n`;
    if (label !== y(q)) svg += `<line x1="${m.l - 5}" y1="${label}" x2="${m.l}" y2="${y(q)}" stroke="#999"/>\n`;
  }
  svg += `<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>\n`;
  svg += `<text x="${m.l + pw / 2}" y="${H - 15}" text-anchor="middle">lag (ms, log scale; values ≤ ${lo} ms drawn at ${lo})</text>\n`;
  series.forEach((s, i) => {
    const name = `${display(s.lib)}${s.store === 'memory' ? '' : ` (${s.store}, ${s.processes} proc)`}${s.periodMs === 60_000 ? ' minute ticks' : ''}`;
    const color = COLORS[s.lib] ?? '#555';
    const dash = s.store === 'redis' ? '6 3' : s.store === 'postgres' ? '2 3' : '';
    const pts = (s.quantiles as number[]).map((v, k) => `${x(v).toFixed(1)},${y(k / 200).toFixed(1)}`).join(' ');
    svg += `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${pts}"/>\n`;
    const ly = m.t + 10 + i * 20;
    svg += `<line x1="${m.l + pw + 12}" y1="${ly}" x2="${m.l + pw + 40}" y2="${ly}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>\n<text x="${m.l + pw + 46}" y="${ly + 4}">${name}</text>\n`;
  });
  svg += '</svg>\n';
  return svg;
}

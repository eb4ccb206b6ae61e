/**
 * `npm run bench:dashboard`: the dashboard against 1,000 jobs and 10,000 runs on a real
 * Redis and a real Postgres store, in the browser tests' headless Chromium. For the jobs
 * page (its first page: 100 jobs), one job's page and one run's page, it measures what
 * the browser transferred (HTML, CSS, JS; compressed sizes as sent) and the time to first
 * render (first contentful paint from the navigation start, over loopback), median of
 * several cold loads; the jobs page's server time with the store's batched
 * `listRunsOfJobs` and without it (one `listRuns` per job); and how long a run created
 * through `scheduler.trigger()` takes to appear on an open job page. Writes
 * bench/DASHBOARD.md.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { PostgresStore } from '../adapters/postgres/index.js';
import { RedisStore } from '../adapters/redis/index.js';
import { Scheduler } from '../src/scheduler.js';
import type { JobSpec, Store } from '../src/store.js';
import { launchBrowser, serveDashboard } from '../test/dashboard/browser.js';
import { DATABASE_URL, REDIS_URL, systemInfo } from './lib/sysinfo.js';

const JOBS = 1_000;
const RUNS_PER_JOB = 10;
const LOADS = 7;
const SCHEDULES = ['*/5 * * * *', '0 2 * * *', '30 9 * * MON-FRI', '0 */4 * * *', '15 3 1 * *'];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function seed(store: Store): Promise<void> {
  await store.init();
  const now = Date.now();
  const specs: JobSpec[] = Array.from({ length: JOBS }, (_, i) => ({
    name: `job-${String(i).padStart(4, '0')}`,
    schedule: { kind: 'cron', expression: SCHEDULES[i % SCHEDULES.length] as string },
    timezone: ZONES[i % ZONES.length] as string,
    concurrencyPolicy: 'Allow',
    history: { succeeded: RUNS_PER_JOB, failed: RUNS_PER_JOB },
  }));
  for (let i = 0; i < specs.length; i += 500) {
    await store.upsertJobs(specs.slice(i, i + 500).map((spec) => ({ spec, now, initialCursor: now })));
  }
  // Per job: 9 finished runs (one in nine failed, with an error message) and one still pending.
  const work = specs.flatMap((spec) => Array.from({ length: RUNS_PER_JOB }, (_, k) => ({ jobName: spec.name, k })));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < work.length) {
      const { jobName, k } = work[next++] as { jobName: string; k: number };
      const at = now - (RUNS_PER_JOB - k) * 60_000;
      const created = await store.createRun({ run: { id: `${jobName}.manual.seed${k}`, jobName, scheduledAt: at, trigger: 'manual', readyAt: at }, now: at });
      if (created.outcome === 'missing-job' || k === RUNS_PER_JOB - 1) continue;
      const claim = await store.claimRun({ runId: created.run.id, owner: 'bench', now: at + 5, leaseUntil: at + 60_000 });
      if (claim === undefined) continue;
      const outcome = k === 3 ? { status: 'failed' as const, error: { name: 'Error', message: 'upstream returned 503 Service Unavailable' } } : { status: 'succeeded' as const };
      await store.finishAttempt({ runId: claim.run.id, owner: 'bench', fence: claim.run.fence, now: at + 1_500, outcome });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

interface PageNumbers {
  readonly page: string;
  readonly kb: number;
  readonly htmlKb: number;
  readonly firstPaintMs: number;
  readonly ttfbMs: number;
}

async function measurePage(browser: Browser, url: string, page: string): Promise<PageNumbers> {
  const kbs: number[] = [];
  const htmls: number[] = [];
  const paints: number[] = [];
  const ttfbs: number[] = [];
  for (let i = 0; i < LOADS; i += 1) {
    const context = await browser.newContext(); // cold: nothing cached
    const tab = await context.newPage();
    const responses: Promise<{ url: string; bytes: number }>[] = [];
    tab.on('requestfinished', (request) => {
      if (request.url().endsWith('/events')) return; // the live stream stays open; not page weight
      responses.push(request.sizes().then((sizes) => ({ url: request.url(), bytes: sizes.responseBodySize + sizes.responseHeadersSize })));
    });
    await tab.goto(url, { waitUntil: 'load' });
    await tab.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0);
    const timing = await tab.evaluate(() => {
      const nav = performance.getEntriesByType('navigation' as never)[0] as unknown as { responseStart: number; requestStart: number };
      return { paint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN, ttfb: nav.responseStart - nav.requestStart };
    });
    const sizes = await Promise.all(responses);
    kbs.push(sizes.reduce((sum, r) => sum + r.bytes, 0) / 1024);
    htmls.push((sizes.find((r) => r.url === url)?.bytes ?? 0) / 1024);
    paints.push(timing.paint);
    ttfbs.push(timing.ttfb);
    await context.close();
  }
  return { page, kb: median(kbs), htmlKb: median(htmls), firstPaintMs: median(paints), ttfbMs: median(ttfbs) };
}

/** Server time of the jobs page, as a plain GET, with or without the store's batched read. */
async function serverTime(store: Store, batched: boolean): Promise<number> {
  const view = batched
    ? store
    : (new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'listRunsOfJobs') return undefined;
          const value = Reflect.get(target, property, receiver) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }) as Store);
  const served = await serveDashboard({ store: view });
  try {
    const times: number[] = [];
    for (let i = 0; i < LOADS + 2; i += 1) {
      const started = performance.now();
      await (await fetch(`${served.url}/`)).text();
      if (i >= 2) times.push(performance.now() - started);
    }
    return median(times);
  } finally {
    await served.close();
  }
}

async function liveLatency(browser: Browser, store: Store, url: string): Promise<number> {
  const scheduler = new Scheduler({ store, logger: false });
  const tab = await browser.newPage();
  await tab.goto(`${url}/jobs/job-0000`);
  await tab.waitForSelector('html[data-live="sse"]');
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    const run = await scheduler.trigger('job-0000', { idempotencyKey: `live${i}` });
    await tab.waitForSelector(`tr[data-run="${run.id}"]`, { timeout: 10_000 });
    times.push(performance.now() - started);
  }
  await tab.close();
  return median(times);
}

interface StoreResult {
  readonly store: string;
  readonly seedSeconds: number;
  readonly pages: PageNumbers[];
  readonly jobsServerMs: { batched: number; perJob: number };
  readonly liveMs: number;
}

async function measure(kind: 'redis' | 'postgres', browser: Browser): Promise<StoreResult> {
  const namespace = `twdashbench_${process.pid}`;
  let store: Store;
  let cleanup: () => Promise<void>;
  if (kind === 'redis') {
    store = new RedisStore({ url: REDIS_URL, prefix: namespace });
    cleanup = async () => {
      await store.close();
      const admin = new Redis(REDIS_URL);
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `{${namespace}[}/]*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await admin.del(...keys);
      } while (cursor !== '0');
      await admin.quit();
    };
  } else {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
    store = new PostgresStore({ pool, schema: namespace });
    cleanup = async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
      await pool.end();
    };
  }
  try {
    const seedStarted = performance.now();
    await seed(store);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const served = await serveDashboard({ store, auth: () => true });
    try {
      const run = (await store.listRuns({ jobName: 'job-0003', limit: 20 })).find((r) => r.status === 'failed');
      const pages = [
        await measurePage(browser, `${served.url}/`, 'jobs (page 1 of 10: 100 jobs)'),
        await measurePage(browser, `${served.url}/jobs/job-0003`, 'one job'),
        await measurePage(browser, `${served.url}/runs/${run?.id}`, 'one run'),
      ];
      const jobsServerMs = { batched: await serverTime(store, true), perJob: await serverTime(store, false) };
      const liveMs = await liveLatency(browser, store, served.url);
      return { store: kind, seedSeconds, pages, jobsServerMs, liveMs };
    } finally {
      await served.close();
    }
  } finally {
    await cleanup();
  }
}

const info = await systemInfo();
const browser = await launchBrowser();
const results: StoreResult[] = [];
try {
  for (const kind of ['redis', 'postgres'] as const) {
    process.stderr.write(`[bench dashboard] ${kind}: seeding ${JOBS} jobs and ${JOBS * RUNS_PER_JOB} runs\n`);
    results.push(await measure(kind, browser));
  }
} finally {
  await browser.close();
}

const f = (n: number, digits = 1): string => n.toFixed(digits);
const lines = [
  '# Dashboard: page weight, first render, live updates',
  '',
  `Measured by \`npm run bench:dashboard\` (bench/dashboard.ts) on ${info.date}: ${info.cpu}, ${info.cores} cores, Node ${info.node}, Redis ${info.redis}, PostgreSQL ${info.postgres}, load ${info.load}. ` +
    `${JOBS.toLocaleString('en-US')} jobs and ${(JOBS * RUNS_PER_JOB).toLocaleString('en-US')} runs per store (per job 9 finished, 1 pending), headless Chromium over loopback, median of ${LOADS} cold loads (empty cache).`,
  '',
  '| store | page | transferred (all) | of which HTML | first render | time to first byte |',
  '|---|---|---:|---:|---:|---:|',
  ...results.flatMap((r) => r.pages.map((p) => `| ${r.store} | ${p.page} | ${f(p.kb)} KB | ${f(p.htmlKb)} KB | ${f(p.firstPaintMs, 0)} ms | ${f(p.ttfbMs, 0)} ms |`)),
  '',
  'Jobs page on the server (GET, whole response), with the store\'s batched `listRunsOfJobs` (one round trip for the 100 jobs on the page) and without it (one `listRuns` per job, 16 at a time):',
  '',
  '| store | batched | one listRuns per job | ratio |',
  '|---|---:|---:|---:|',
  ...results.map((r) => `| ${r.store} | ${f(r.jobsServerMs.batched)} ms | ${f(r.jobsServerMs.perJob)} ms | ${f(r.jobsServerMs.perJob / r.jobsServerMs.batched, 2)}× |`),
  '',
  'Live update: from `scheduler.trigger()` to the new run\'s row in an open job page (store notification → server-sent event → page refetch → DOM), median of 5:',
  '',
  ...results.map((r) => `- ${r.store}: ${f(r.liveMs, 0)} ms`),
  '',
  `Seeding took ${results.map((r) => `${f(r.seedSeconds)} s (${r.store})`).join(', ')}.`,
  '',
];
writeFileSync('bench/DASHBOARD.md', lines.join('\n'));
process.stdout.write(lines.join('\n'));

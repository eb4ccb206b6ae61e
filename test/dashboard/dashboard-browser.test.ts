/**
 * The dashboard in a real browser (Debian's headless Chromium through playwright-core)
 * against a real Redis store and a real Postgres store: the jobs page, a run appearing
 * live (server-sent events, no reload), trigger with data, pause, resume and backfill
 * through the page, read-only mode, the CSRF rejection, and user-supplied text (run
 * data, error messages) shown as text. Real time, real servers: a browser suite.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { RedisStore } from '../../adapters/redis/index.js';
import { Scheduler } from '../../src/scheduler.js';
import type { Store } from '../../src/store.js';
import { DATABASE_URL, REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';
import { launchBrowser, requireBrowser, serveDashboard, type Served } from './browser.js';

const browserUp = requireBrowser();
const XSS = '<img src=x onerror=alert(1)>';
/** How long a change may take to reach the page: the goal is one second; slack for a loaded CI machine. */
const LIVE_TIMEOUT_MS = 2_000;

interface Backend {
  readonly kind: 'redis' | 'postgres';
  readonly up: boolean;
  open(): Promise<{ store: Store; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    kind: 'redis',
    up: browserUp && (await requireServer('redis')),
    async open() {
      const prefix = uniqueNamespace('twdash');
      const store = new RedisStore({ url: REDIS_URL, prefix });
      return {
        store,
        async cleanup() {
          await store.close();
          const admin = new Redis(REDIS_URL);
          await deleteRedisKeys(admin, prefix);
          await admin.quit();
        },
      };
    },
  },
  {
    kind: 'postgres',
    up: browserUp && (await requireServer('postgres')),
    async open() {
      const schema = uniqueNamespace('twdash');
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
      const store = new PostgresStore({ pool, schema });
      return {
        store,
        async cleanup() {
          await store.close();
          await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await pool.end();
        },
      };
    },
  },
];

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const backend of backends) {
  describe.skipIf(!backend.up)(`dashboard in Chromium, ${backend.kind} store`, () => {
    let browser: Browser;
    let store: Store;
    let cleanup: () => Promise<void>;
    let scheduler: Scheduler;
    let served: Served;
    let readOnly: Served;
    let page: Page;
    const dialogs: string[] = [];

    beforeAll(async () => {
      ({ store, cleanup } = await backend.open());
      scheduler = new Scheduler({ store, logger: false });
      scheduler.register({ name: 'report', schedule: '0 3 * * *', timezone: 'Europe/Berlin', concurrencyPolicy: 'Forbid', handler: () => {} });
      scheduler.register({ name: 'adhoc', schedule: '0 0 1 1 *', handler: () => {} });
      scheduler.register({ name: 'broken', schedule: '0 0 1 1 *', retry: false, handler: () => Promise.reject(new Error(XSS)) });
      await scheduler.start();
      served = await serveDashboard({ store, basePath: '/admin', auth: () => true });
      readOnly = await serveDashboard({ store });
      browser = await launchBrowser();
      page = await browser.newPage();
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
    });

    afterAll(async () => {
      await browser?.close();
      await served?.close();
      await readOnly?.close();
      await scheduler?.stop();
      await cleanup?.();
    });

    it('shows every job with its schedule, zone, policy, state and next tick', async () => {
      const response = await page.goto(`${served.url}/`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
      const row = page.locator('tr[data-job="report"]');
      await expect.poll(() => row.textContent()).toContain('Europe/Berlin');
      const text = await row.textContent();
      expect(text).toContain('0 3 * * *');
      expect(text).toContain('at 03:00 every day');
      expect(text).toContain('Forbid');
      expect(text).toContain('active');
      expect(await row.locator('time').first().getAttribute('datetime')).toBe((await scheduler.getJob('report'))?.nextRunAt?.toISOString());
      expect(await page.locator('tr[data-job]').count()).toBe(3);
    });

    it('shows a run appear live, from the store notification, without reloading', async () => {
      await page.goto(`${served.url}/jobs/adhoc`);
      await page.waitForSelector('html[data-live="sse"]');
      await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 1));
      const started = Date.now();
      const run = await scheduler.trigger('adhoc', { idempotencyKey: `live-${Date.now()}` });
      await page.waitForSelector(`tr[data-run="${run.id}"]`, { timeout: LIVE_TIMEOUT_MS });
      console.log(`[dashboard ${backend.kind}] run on the page ${Date.now() - started} ms after trigger()`);
      expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(1);
      // And it finishes live too.
      await page.waitForSelector(`tr[data-run="${run.id}"] .s-succeeded`, { timeout: 10_000 });
    });

    it('triggers a run with data through the page and shows the data as text', async () => {
      await page.goto(`${served.url}/jobs/adhoc`);
      await page.fill('#trigger-data', JSON.stringify({ html: XSS }));
      await Promise.all([page.waitForURL(/done=trigger/), page.click('#trigger')]);
      const link = page.locator('.notice a');
      const runId = await link.textContent();
      expect(runId).toMatch(/^adhoc\.manual\./);
      await link.click();
      await page.waitForSelector('pre.data');
      expect(JSON.parse((await page.locator('pre.data').textContent()) as string)).toEqual({ html: XSS });
      expect(await page.locator('main img').count()).toBe(0);
      expect((await store.getRun(runId as string))?.data).toEqual({ html: XSS });
      expect(dialogs).toEqual([]);
    });

    it('shows an error message as text', async () => {
      const run = await scheduler.trigger('broken');
      await until(async () => (await store.getRun(run.id))?.status === 'failed');
      await page.goto(`${served.url}/jobs/broken`);
      expect(await page.locator(`tr[data-run="${run.id}"] .error`).textContent()).toBe(`Error: ${XSS}`);
      await page.goto(`${served.url}/runs/${run.id}`);
      expect(await page.locator('pre.error').textContent()).toBe(`Error: ${XSS}`);
      expect(await page.locator('main img').count()).toBe(0);
      expect(dialogs).toEqual([]);
    });

    it('pauses and resumes a job through the page', async () => {
      await page.goto(`${served.url}/jobs/report`);
      await Promise.all([page.waitForURL(/done=pause/), page.click('#pause')]);
      expect((await store.getJob('report'))?.suspended).toBe(true);
      expect(await page.locator('#job .badge').textContent()).toBe('suspended');
      await Promise.all([page.waitForURL(/done=resume/), page.click('#resume')]);
      expect((await store.getJob('report'))?.suspended).toBe(false);
      expect(await page.locator('#job .badge').textContent()).toBe('active');
    });

    it('records a backfill through the page', async () => {
      await page.goto(`${served.url}/jobs/report`);
      await page.fill('input[name=from]', '2026-01-01T00:00:00Z');
      await page.fill('input[name=to]', '2026-01-02T12:00:00Z');
      await Promise.all([page.waitForURL(/done=backfill/), page.click('#backfill')]);
      await until(async () => (await store.listRuns({ jobName: 'report' })).some((run) => run.trigger === 'backfill'));
    });

    it('shows bad input back, escaped, and writes nothing', async () => {
      const before = (await store.listRuns({ jobName: 'adhoc' })).length;
      await page.goto(`${served.url}/jobs/adhoc`);
      await page.fill('#trigger-data', XSS);
      const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('#trigger')]);
      expect(response.status()).toBe(400);
      expect(await page.locator('.notice.error').textContent()).toContain(`data: is not valid JSON`);
      expect(await page.locator('.notice.error').textContent()).toContain('<img src=x');
      expect(await page.locator('main img').count()).toBe(0);
      expect((await store.listRuns({ jobName: 'adhoc' })).length).toBe(before);
    });

    it('rejects a POST without a valid CSRF token, even from the page itself', async () => {
      await page.goto(`${served.url}/jobs/report`);
      const statuses = await page.evaluate(async (url) => {
        const post = (body: string) => fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } }).then((r) => r.status);
        return [await post(''), await post('_csrf=forged')];
      }, `${served.url}/jobs/report/pause`);
      expect(statuses).toEqual([403, 403]);
      expect((await store.getJob('report'))?.suspended).toBe(false);
    });

    it('is read-only without auth: no forms, and a POST is refused', async () => {
      await page.goto(`${readOnly.url}/jobs/report`);
      expect(await page.locator('form[method=post]').count()).toBe(0);
      expect(await page.locator('header').textContent()).toContain('read-only');
      const status = await page.evaluate(
        (url) => fetch(url, { method: 'POST', body: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } }).then((r) => r.status),
        `${readOnly.url}/jobs/report/pause`,
      );
      expect(status).toBe(403);
      expect((await store.getJob('report'))?.suspended).toBe(false);
    });
  });
}

describe.skipIf(!browserUp)('dashboard in Chromium, a store without notifications', () => {
  it('falls back to polling: the page still updates, every pollInterval', async () => {
    const memory = new MemoryStore();
    // A store whose watch() never notifies, as a Postgres store on a client without LISTEN.
    const silent = new Proxy(memory, {
      get(target, property, receiver) {
        if (property === 'watch') return () => () => {};
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const scheduler = new Scheduler({ store: memory, logger: false });
    scheduler.register({ name: 'adhoc', schedule: '0 0 1 1 *', handler: () => {} });
    await scheduler.start();
    const served = await serveDashboard({ store: silent, pollInterval: '500ms' });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${served.url}/jobs/adhoc`);
      await page.waitForSelector('html[data-live="sse"]');
      const run = await scheduler.trigger('adhoc');
      await page.waitForSelector(`tr[data-run="${run.id}"]`, { timeout: LIVE_TIMEOUT_MS });
    } finally {
      await browser.close();
      await served.close();
      await scheduler.stop();
    }
  });
});

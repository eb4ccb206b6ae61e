/**
 * The dashboard handler over HTTP, without a browser: mounted on node:http, Express and
 * Fastify as the README shows (the snippets' own code), the security headers, the
 * CSRF and origin checks, read-only mode, option validation, and a failing store.
 * Memory store and fake clock; real sockets on 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../adapters/memory/index.js';
import { createDashboard, type DashboardHandler } from '../../src/dashboard/index.js';
import { ValidationError } from '../../src/errors.js';
import { Scheduler } from '../../src/scheduler.js';
import type { Store } from '../../src/store.js';
import { FakeClock } from '../../src/testing/index.js';

const T0 = Date.UTC(2026, 2, 1);
let store: MemoryStore;
let clock: FakeClock;
const closers: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  store = new MemoryStore();
  clock = new FakeClock(T0);
  const scheduler = new Scheduler({ store, clock, logger: false });
  scheduler.register({ name: 'report', schedule: '30 2 * * *', timezone: 'America/New_York', handler: () => {} });
  await scheduler.start();
  await scheduler.stop();
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function dashboard(options: Partial<Parameters<typeof createDashboard>[0]> = {}): DashboardHandler {
  const handler = createDashboard({ store, clock, auth: () => true, ...options });
  closers.push(() => handler.close());
  return handler;
}

/** GETs a page as a browser would, and posts its first form of `action` with its CSRF token and cookie. */
async function postForm(origin: string, pagePath: string, action: string, fields: Record<string, string> = {}): Promise<Response> {
  const page = await fetch(origin + pagePath);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  return fetch(origin + action, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, ...fields }).toString(),
  });
}

describe('mounting', () => {
  it('node:http: http.createServer(dashboard)', async () => {
    const origin = await listen(http.createServer(dashboard()));
    const page = await fetch(`${origin}/jobs/report`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('at 02:30 every day');
    // The next ticks of the job's page, with the 2026-03-08 spring-forward gap in New York marked.
    expect(text).toContain('2026-03-08T07:30:00.000Z');
    expect(text).toContain('2026-03-08 03:30 -04:00');
    expect(text).toContain('shifted: 02:30 was skipped');
    const posted = await postForm(origin, '/jobs/report', '/jobs/report/pause');
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe('/jobs/report?done=pause');
    expect((await store.getJob('report'))?.suspended).toBe(true);
  });

  it('Express: app.use(path, dashboard), behind express.urlencoded(), base path from the mount', async () => {
    const app = express();
    app.use('/admin/jobs', express.urlencoded({ extended: false }), dashboard());
    const origin = await listen(http.createServer(app));
    const page = await (await fetch(`${origin}/admin/jobs/`)).text();
    expect(page).toContain('href="/admin/jobs/jobs/report"');
    expect(page).toMatch(/src="\/admin\/jobs\/assets\/app\.\w+\.js"/);
    const asset = await fetch(origin + (/src="([^"]+\.js)"/.exec(page)?.[1] as string));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const posted = await postForm(origin, '/admin/jobs/jobs/report', '/admin/jobs/jobs/report/trigger', { data: '{"region":"eu"}' });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toMatch(/^\/admin\/jobs\/jobs\/report\?done=trigger&run=report\.manual\./);
    expect((await store.listRuns({ jobName: 'report' }))[0]?.data).toEqual({ region: 'eu' });
  });

  it('Fastify: a hijacked route, with form bodies left to the dashboard', async () => {
    const app = Fastify();
    const handler = dashboard({ basePath: '/admin/jobs' });
    app.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => done(null));
    for (const url of ['/admin/jobs', '/admin/jobs/*']) {
      app.all(url, (request, reply) => {
        reply.hijack();
        return handler(request.raw, reply.raw);
      });
    }
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    expect((await fetch(`${origin}/admin/jobs`, { redirect: 'manual' })).headers.get('location')).toBe('/admin/jobs/');
    expect(await (await fetch(`${origin}/admin/jobs/`)).text()).toContain('href="/admin/jobs/jobs/report"');
    const posted = await postForm(origin, '/admin/jobs/jobs/report', '/admin/jobs/jobs/report/backfill', { from: '2026-02-01T00:00:00Z', to: '2026-02-03T00:00:00Z' });
    expect(posted.status).toBe(303);
    expect((await store.getJob('report'))?.backfills).toHaveLength(1);
  });
});

describe('requests', () => {
  it('sends a strict CSP and no-sniff on every response, and gzips pages when asked', async () => {
    const origin = await listen(http.createServer(dashboard()));
    for (const path of ['/', '/jobs/report', '/jobs/nope', '/runs/nope', '/nope']) {
      const response = await fetch(origin + path);
      expect(response.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.status).toBe(path === '/' || path === '/jobs/report' ? 200 : 404);
    }
    const raw = await new Promise<http.IncomingMessage>((resolve) => http.get(`${origin}/`, { headers: { 'accept-encoding': 'gzip' } }, resolve));
    raw.resume();
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect((await fetch(`${origin}/`, { method: 'PUT' })).status).toBe(405);
  });

  it('refuses a POST without the CSRF token, with a forged one, or from another origin; nothing is written', async () => {
    const origin = await listen(http.createServer(dashboard()));
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await fetch(`${origin}/jobs/report/pause`, { method: 'POST', headers: form, body: '' })).status).toBe(403);
    const page = await fetch(`${origin}/jobs/report`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    expect((await fetch(`${origin}/jobs/report/pause`, { method: 'POST', headers: { ...form, cookie }, body: '_csrf=forged' })).status).toBe(403);
    expect((await fetch(`${origin}/jobs/report/pause`, { method: 'POST', headers: { ...form }, body: `_csrf=${token}` })).status).toBe(403);
    const crossSite = await fetch(`${origin}/jobs/report/pause`, { method: 'POST', headers: { ...form, cookie, origin: 'https://evil.example' }, body: `_csrf=${token}` });
    expect(crossSite.status).toBe(403);
    expect((await store.getJob('report'))?.suspended).toBe(false);
  });

  it('is read-only without auth, and when auth refuses or throws', async () => {
    for (const auth of [undefined, () => false, () => Promise.reject(new Error('down'))]) {
      const handler = createDashboard({ store, clock, ...(auth === undefined ? {} : { auth }) });
      closers.push(() => handler.close());
      const origin = await listen(http.createServer(handler));
      const page = await (await fetch(`${origin}/jobs/report`)).text();
      expect(page).not.toContain('<form class="card" method="post"');
      expect(page).toContain('Read-only');
      expect((await fetch(`${origin}/jobs/report/pause`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })).status).toBe(403);
    }
    expect((await store.getJob('report'))?.suspended).toBe(false);
  });

  it('answers a failing store with an error page, escaped, and keeps serving', async () => {
    let fail = true;
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'listJobs' && fail) return () => Promise.reject(new Error('<b>connection refused</b>'));
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const origin = await listen(http.createServer(dashboard({ store: flaky })));
    const down = await fetch(`${origin}/`);
    expect(down.status).toBe(503);
    expect(await down.text()).toContain('The store failed: &lt;b&gt;connection refused&lt;/b&gt;');
    fail = false;
    expect((await fetch(`${origin}/`)).status).toBe(200);
  });

  it('validates its options', () => {
    expect(() => createDashboard({ store: {} as Store })).toThrow(ValidationError);
    expect(() => createDashboard({ store: {} as Store })).toThrow(/store: must be a Store/);
    expect(() => createDashboard({ store, basePath: 'admin/' })).toThrow(/basePath: must be '' or a path/);
    expect(() => createDashboard({ store, auth: true as never })).toThrow(/auth: must be a function/);
    expect(() => createDashboard({ store, csrfSecret: 'short' })).toThrow(/csrfSecret: must be at least 16 characters/);
    expect(() => createDashboard({ store, pollInterval: '10ms' })).toThrow(/pollInterval/);
  });
});

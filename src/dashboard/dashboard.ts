/**
 * `createDashboard()`: the web dashboard as one Node request handler. It routes,
 * reads the store, renders pages, serves its assets and the live event stream, and
 * carries out the four actions (trigger, pause, resume, backfill) through a
 * `Scheduler` on the same store that is never started, so an action goes through
 * exactly the validation and store calls of the public API. Nothing it does throws
 * into the host: a failing store or a bad request gets an error page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import * as z from 'zod/mini';
import { systemClock, type Clock } from '../clock.js';
import type { Duration } from '../duration.js';
import { JobNotFoundError, messageOf, TickworkError, ValidationError } from '../errors.js';
import { clockSchema, durationSchema, storeSchema } from '../options.js';
import { Scheduler } from '../scheduler.js';
import type { JsonValue, Store } from '../store.js';
import { parseInput, strictObject } from '../validation.js';
import { ASSETS } from './assets.js';
import { Csrf, CSRF_FIELD } from './csrf.js';
import { loadJobPage, loadJobsPage, loadRunPage } from './data.js';
import { html, type Html } from './html.js';
import { LiveHub } from './live.js';
import { jobPage, jobsPage, messagePage, runPage, type PageContext } from './pages.js';
import { TickReader } from './ticks.js';

export interface DashboardOptions {
  /** The store to show: the one your schedulers use. */
  readonly store: Store;
  /**
   * The path the handler is mounted at, e.g. `'/admin/jobs'`. Under Express `app.use(path, handler)`
   * it is read from the request when not given.
   * @default ''
   */
  readonly basePath?: string;
  /**
   * Decides whether a request may change jobs (trigger, pause, resume, backfill). Without it
   * the dashboard is read-only. Called for every page (to show or hide the forms) and every
   * action; a throw or rejection counts as `false`.
   */
  readonly auth?: (req: IncomingMessage) => boolean | Promise<boolean>;
  /**
   * The key the CSRF tokens of the forms are signed with. Give the same one to every process
   * behind a load balancer. @default a random key per dashboard (tokens last until a restart)
   */
  readonly csrfSecret?: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /**
   * Pages also refresh this often when no change notification arrived meanwhile: how a store
   * without notifications (a Postgres store on a client without LISTEN) still updates.
   * @default '5s'
   */
  readonly pollInterval?: Duration;
}

/** A Node request handler, for `node:http`, Express (`app.use`) and Fastify (see the README). */
export interface DashboardHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Ends the live event streams and the store subscription (the store itself is yours to close). */
  close(): void;
}

const BASE_PATH = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/;
const MAX_BODY_BYTES = 64 * 1024;
const ACTIONS = ['trigger', 'pause', 'resume', 'backfill'] as const;
type Action = (typeof ACTIONS)[number];
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const compress = promisify(gzip);

const optionsSchema = strictObject({
  store: storeSchema,
  basePath: z.optional(z.string({ error: 'must be a string' }).check(z.regex(BASE_PATH, "must be '' or a path such as '/admin/jobs' (no trailing slash)"))),
  auth: z.optional(z.custom<NonNullable<DashboardOptions['auth']>>((value) => typeof value === 'function', 'must be a function (req) => boolean | Promise<boolean>')),
  csrfSecret: z.optional(z.string({ error: 'must be a string' }).check(z.minLength(16, 'must be at least 16 characters'))),
  clock: z.optional(clockSchema),
  pollInterval: z.optional(durationSchema(100)),
});

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function createDashboard(options: DashboardOptions): DashboardHandler {
  const parsed = parseInput(optionsSchema, options, 'createDashboard()');
  const dashboard = new Dashboard(parsed.store, {
    basePath: parsed.basePath,
    auth: parsed.auth,
    csrf: new Csrf(parsed.csrfSecret),
    clock: parsed.clock ?? systemClock,
    pollMs: parsed.pollInterval ?? 5_000,
  });
  const handler = (req: IncomingMessage, res: ServerResponse): Promise<void> => dashboard.handle(req, res);
  return Object.assign(handler, { close: () => dashboard.close() });
}

interface Settings {
  readonly basePath: string | undefined;
  readonly auth: DashboardOptions['auth'];
  readonly csrf: Csrf;
  readonly clock: Clock;
  readonly pollMs: number;
}

class Dashboard {
  readonly #store: Store;
  readonly #settings: Settings;
  readonly #scheduler: Scheduler;
  readonly #live: LiveHub;
  readonly #ticks = new TickReader();
  readonly #assets = new Map(ASSETS.map((asset) => [asset.path, asset]));
  readonly #assetPaths: PageContext['assets'];
  #ready: Promise<void> | undefined;

  constructor(store: Store, settings: Settings) {
    this.#store = store;
    this.#settings = settings;
    this.#scheduler = new Scheduler({ store, clock: settings.clock, logger: false });
    this.#live = new LiveHub(store, settings.clock);
    const path = (type: string): string => (ASSETS.find((asset) => asset.path.endsWith(type)) as { path: string }).path;
    this.#assetPaths = { css: path('.css'), js: path('.js') };
  }

  close(): void {
    this.#live.close();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const base = this.#settings.basePath ?? (req as { baseUrl?: string }).baseUrl ?? '';
    try {
      res.setHeader('Content-Security-Policy', CSP);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'same-origin');
      res.setHeader('X-Frame-Options', 'DENY');
      const url = new URL((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/', 'http://dashboard.invalid');
      const path = url.pathname.startsWith(base) ? url.pathname.slice(base.length) : undefined;
      if (path === undefined || (path !== '' && !path.startsWith('/'))) throw new HttpError(404, 'Not found');
      if (path === '') return redirect(res, `${base}/`);
      const method = req.method ?? 'GET';
      if (method === 'POST') return await this.#action(req, res, base, path);
      if (method !== 'GET' && method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD, POST');
        throw new HttpError(405, 'Method not allowed');
      }
      const asset = this.#assets.get(path);
      if (asset !== undefined) return send(req, res, 200, asset.type, asset.body, 'public, max-age=31536000, immutable');
      if (path === '/events') return await this.#events(req, res);
      await this.#page(req, res, base, path, url.searchParams);
    } catch (error) {
      await this.#fail(req, res, base, error);
    }
  }

  async #page(req: IncomingMessage, res: ServerResponse, base: string, path: string, query: URLSearchParams): Promise<void> {
    await this.#init();
    const ctx = await this.#context(req, res, base, noticeOf(base, query));
    let page: Html;
    if (path === '/') {
      const filter = query.get('q') ?? '';
      page = jobsPage(ctx, await loadJobsPage(this.#store, { filter, page: Number(query.get('page')) || 1 }), filter);
    } else if (path.startsWith('/jobs/') && !path.slice(6).includes('/')) {
      const name = decode(path.slice(6));
      const data = await loadJobPage(this.#store, name);
      if (data === undefined) throw new HttpError(404, `No job named ${JSON.stringify(name)} in the store.`);
      page = jobPage(ctx, data);
    } else if (path.startsWith('/runs/') && !path.slice(6).includes('/')) {
      const id = decode(path.slice(6));
      const data = await loadRunPage(this.#store, id);
      if (data === undefined) throw new HttpError(404, `No run with ID ${JSON.stringify(id)} in the store (finished runs are pruned beyond the job's history limits).`);
      page = runPage(ctx, data);
    } else throw new HttpError(404, 'Not found');
    await sendHtml(req, res, 200, page);
  }

  async #events(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.#live.attach(req, res);
  }

  async #action(req: IncomingMessage, res: ServerResponse, base: string, path: string): Promise<void> {
    const match = /^\/jobs\/([^/]+)\/([a-z]+)$/.exec(path);
    const action = match?.[2] as Action | undefined;
    if (match === null || action === undefined || !ACTIONS.includes(action)) throw new HttpError(404, 'Not found');
    if (this.#settings.auth === undefined) throw new HttpError(403, 'This dashboard is read-only: it was created without auth.');
    if (!sameOrigin(req)) throw new HttpError(403, 'Cross-origin request refused.');
    const form = await readForm(req);
    if (!this.#settings.csrf.verify(req, form.get(CSRF_FIELD) ?? undefined)) throw new HttpError(403, 'CSRF token missing or invalid: reload the page and try again.');
    if (!(await this.#allowed(req))) throw new HttpError(403, 'Not allowed: auth refused this request.');
    const name = decode(match[1] as string);
    const target = `${base}/jobs/${encodeURIComponent(name)}`;
    await this.#init();
    try {
      const done = await this.#perform(action, name, form);
      redirect(res, `${target}?${new URLSearchParams({ done: action, ...(done === undefined ? {} : { run: done }) })}`);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // Bad input: the job's page again, with the problem, and nothing written.
      const data = await loadJobPage(this.#store, name);
      const ctx = await this.#context(req, res, base, { kind: 'error', text: error.message });
      await sendHtml(req, res, 400, data === undefined ? messagePage(ctx, 'Bad request', error.message) : jobPage(ctx, data));
    }
  }

  /** Carries out an action through the scheduler API; resolves the ID of a triggered run. */
  async #perform(action: Action, name: string, form: URLSearchParams): Promise<string | undefined> {
    switch (action) {
      case 'trigger': {
        const data = parseData(form.get('data') ?? '');
        const key = form.get('idempotencyKey')?.trim() ?? '';
        const run = await this.#scheduler.trigger(name, { ...(data === undefined ? {} : { data: data.value }), ...(key === '' ? {} : { idempotencyKey: key }) });
        return run.id;
      }
      case 'pause':
        await this.#scheduler.pause(name);
        return undefined;
      case 'resume':
        await this.#scheduler.resume(name);
        return undefined;
      case 'backfill':
        await this.#scheduler.backfill(name, { from: (form.get('from') ?? '').trim(), to: (form.get('to') ?? '').trim() });
        return undefined;
    }
  }

  async #context(req: IncomingMessage, res: ServerResponse, base: string, notice: PageContext['notice']): Promise<PageContext> {
    const canWrite = await this.#allowed(req);
    return {
      base,
      now: this.#settings.clock.now(),
      canWrite,
      csrfToken: canWrite ? this.#settings.csrf.tokenFor(req, res, base === '' ? '/' : base) : '',
      pollMs: this.#settings.pollMs,
      ticks: this.#ticks,
      assets: this.#assetPaths,
      ...(notice === undefined ? {} : { notice }),
    };
  }

  async #allowed(req: IncomingMessage): Promise<boolean> {
    const auth = this.#settings.auth;
    if (auth === undefined) return false;
    try {
      return (await auth(req)) === true;
    } catch {
      return false;
    }
  }

  /** `store.init()` once (idempotent and safe to race): the dashboard may be the first to use a store. */
  #init(): Promise<void> {
    this.#ready ??= this.#store.init().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #fail(req: IncomingMessage, res: ServerResponse, base: string, error: unknown): Promise<void> {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = error instanceof HttpError ? error.status : error instanceof JobNotFoundError ? 404 : 503;
    const title = status === 404 ? 'Not found' : status === 403 ? 'Forbidden' : status === 405 ? 'Method not allowed' : status === 413 || status === 415 ? 'Bad request' : 'The store did not answer';
    const message = error instanceof HttpError || error instanceof TickworkError ? error.message : `The store failed: ${messageOf(error)}`;
    const ctx: PageContext = {
      base,
      now: this.#settings.clock.now(),
      canWrite: false,
      csrfToken: '',
      pollMs: this.#settings.pollMs,
      ticks: this.#ticks,
      assets: this.#assetPaths,
    };
    try {
      await sendHtml(req, res, status, messagePage(ctx, title, message));
    } catch {
      res.destroy();
    }
  }
}

function noticeOf(base: string, query: URLSearchParams): PageContext['notice'] {
  switch (query.get('done')) {
    case 'trigger': {
      const run = query.get('run') ?? '';
      return { kind: 'ok', text: html`Triggered run <a href="${base}/runs/${encodeURIComponent(run)}"><code>${run}</code></a>.` };
    }
    case 'pause':
      return { kind: 'ok', text: 'Paused: no run starts for a tick after now.' };
    case 'resume':
      return { kind: 'ok', text: 'Resumed.' };
    case 'backfill':
      return { kind: 'ok', text: 'Backfill recorded: its runs start one at a time.' };
    default:
      return undefined;
  }
}

/** The trigger form's data: absent when empty, otherwise JSON (a `ValidationError` when it is not). */
function parseData(text: string): { value: JsonValue } | undefined {
  if (text.trim() === '') return undefined;
  try {
    return { value: JSON.parse(text) as JsonValue };
  } catch (error) {
    throw new ValidationError('trigger', [{ path: 'data', message: `is not valid JSON (${messageOf(error)})`, value: text }]);
  }
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(404, 'Not found');
  }
}

/** A POST whose `Origin` (sent by browsers on every POST) names another host is refused, whatever its token. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** The form fields: from a body parser that ran before (Express `urlencoded()`), or read here. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const parsed = (req as { body?: unknown }).body;
  if (typeof parsed === 'object' && parsed !== null && !Buffer.isBuffer(parsed)) {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(parsed)) if (typeof value === 'string') form.set(key, value);
    return form;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new HttpError(415, 'Expected a form (application/x-www-form-urlencoded).');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `The form is larger than ${MAX_BODY_BYTES / 1024} KB.`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}

async function sendHtml(req: IncomingMessage, res: ServerResponse, status: number, page: Html): Promise<void> {
  const body = Buffer.from(page.text);
  const gzipped = body.length > 1024 && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  if (gzipped) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Vary', 'Accept-Encoding');
  send(req, res, status, 'text/html; charset=utf-8', gzipped ? await compress(body) : body, 'no-store');
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: Buffer, cache: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': body.length, 'Cache-Control': cache });
  res.end(req.method === 'HEAD' ? undefined : body);
}

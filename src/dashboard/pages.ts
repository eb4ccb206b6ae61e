/**
 * The dashboard's pages as HTML, rendered on the server from store records: the
 * jobs list, one job, one run, and a message page. Every value goes through the
 * `html` tag, which escapes it. Regions marked `data-live` are what the page script
 * swaps on a live update; forms stay outside them.
 */
import type { IndexRecord, JobRecord, RunRecord } from '../store.js';
import { compactDuration, describeDuration, describeSchedule } from './describe.js';
import { html, type Html } from './html.js';
import type { JobPageData, JobsPageData, RunPageData } from './data.js';
import type { Tick, TickReader } from './ticks.js';

export interface PageContext {
  /** The path the dashboard is mounted at: '' or '/admin/jobs'. */
  readonly base: string;
  readonly now: number;
  readonly canWrite: boolean;
  readonly csrfToken: string;
  readonly pollMs: number;
  readonly ticks: TickReader;
  readonly assets: { readonly css: string; readonly js: string };
  readonly notice?: { readonly kind: 'ok' | 'error'; readonly text: Html | string };
}

/** Finished runs in a job's strip of recent outcomes. */
const STRIP_LENGTH = 10;
const NEXT_TICKS = 10;
const ERROR_PREVIEW = 160;

export function layout(ctx: PageContext, title: string, content: Html, watch: { job?: string; run?: string } = {}): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · tickwork</title><link rel="stylesheet" href="${ctx.base}${ctx.assets.css}"></head>
<body data-events="${ctx.base}/events" data-poll="${ctx.pollMs}" data-watch-job="${watch.job ?? ''}" data-watch-run="${watch.run ?? ''}">
<header><a href="${ctx.base}/">tickwork</a><span class="muted small">${ctx.canWrite ? '' : 'read-only'}</span><span class="live">live</span></header>
<main>${ctx.notice === undefined ? '' : html`<div class="notice${ctx.notice.kind === 'error' ? ' error' : ''}" role="status">${ctx.notice.text}</div>`}
${content}</main>
<script src="${ctx.base}${ctx.assets.js}"></script></body></html>`;
}

export function jobsPage(ctx: PageContext, data: JobsPageData, filter: string): Html {
  const link = (page: number): string => `${ctx.base}/?${new URLSearchParams({ ...(filter === '' ? {} : { q: filter }), page: String(page) })}`;
  const pager =
    data.pages <= 1
      ? ''
      : html`<nav class="pager">${data.page > 1 ? html`<a href="${link(data.page - 1)}">← previous</a>` : ''}<span class="muted">page ${data.page} of ${data.pages}</span>${
          data.page < data.pages ? html`<a href="${link(data.page + 1)}">next →</a>` : ''
        }</nav>`;
  const rows = data.jobs.map((job) => jobRow(ctx, job, data.runs.get(job.name) ?? []));
  return layout(
    ctx,
    'Jobs',
    html`<h1>Jobs</h1>
<form class="toolbar" method="get" action="${ctx.base}/"><input type="text" name="q" value="${filter}" placeholder="filter by name" aria-label="filter by name"><button class="secondary">Filter</button></form>
<section id="jobs" data-live><p class="muted small">${data.total.toLocaleString('en-US')} job${data.total === 1 ? '' : 's'}</p>
<table><thead><tr><th>Job</th><th>Schedule</th><th>Zone</th><th>Policy</th><th>State</th><th>Next tick</th><th>Last scheduled</th><th>Last success</th><th title="succeeded / failed / skipped">✓ / ✗ / skipped</th><th>Active</th><th>Recent</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="11" class="muted">No jobs${filter === '' ? '' : ' match the filter'}.</td></tr>` : rows}</tbody></table>${pager}</section>`,
  );
}

function jobRow(ctx: PageContext, job: JobRecord, runs: readonly RunRecord[]): Html {
  const active = runs.filter((run) => run.status === 'pending' || run.status === 'running');
  const recent = runs.filter((run) => run.finishedAt !== undefined).slice(0, STRIP_LENGTH).reverse();
  return html`<tr data-job="${job.name}"><td><a href="${jobHref(ctx, job.name)}">${job.name}</a></td>
<td>${scheduleCell(job)}</td><td>${job.timezone}</td><td>${job.concurrencyPolicy}</td><td>${stateBadge(job)}</td>
<td>${time(ctx, ctx.ticks.nextTick(job, ctx.now))}</td><td>${time(ctx, job.lastScheduleTime)}</td><td>${time(ctx, job.lastSuccessfulTime)}</td>
<td class="num">${job.succeeded} / ${job.failed} / ${job.skipped}</td>
<td class="num">${active.length === 0 ? html`<span class="muted">0</span>` : html`<span title="${active.map((run) => `${run.id}: ${run.status}`).join('\n')}">${active.length}</span>`}</td>
<td><div class="strip">${recent.map((run) => html`<a class="s-${run.status}" href="${runHref(ctx, run.id)}" title="${run.status} · ${iso(run.finishedAt)}"></a>`)}</div></td></tr>`;
}

export function jobPage(ctx: PageContext, data: JobPageData): Html {
  const { job, runs } = data;
  const ticks = ctx.ticks.nextTicks(job, ctx.now, NEXT_TICKS);
  return layout(
    ctx,
    job.name,
    html`<h1>${job.name}</h1>
<div class="grid"><section id="job" data-live>${jobSummary(ctx, job)}</section>
<section><h2 class="first">Actions</h2>${ctx.canWrite ? jobActions(ctx, job) : html`<p class="muted">Read-only: the dashboard was created without <code>auth</code>, or this request is not allowed to change jobs.</p>`}</section></div>
<section id="ticks" data-live><h2>Next ${NEXT_TICKS} ticks</h2>${ticksTable(ctx, job, ticks)}</section>
<section id="runs" data-live><h2>Runs</h2><p class="muted small">Newest first; the store keeps active runs and the finished ones its history limits allow (${job.history.succeeded} succeeded, ${job.history.failed} failed or cancelled${job.history.ttlMs === undefined ? '' : `, for ${describeDuration(job.history.ttlMs)}`}). Skipped ticks: ${job.skipped}.</p>${runsTable(ctx, runs)}</section>`,
    { job: job.name },
  );
}

function jobSummary(ctx: PageContext, job: JobRecord): Html {
  const fanOut = job.fanOut;
  return html`<dl>
<dt>State</dt><dd>${stateBadge(job)}</dd>
<dt>Schedule</dt><dd>${scheduleCell(job)}</dd>
<dt>Time zone</dt><dd>${job.timezone}</dd>
<dt>Concurrency policy</dt><dd>${job.concurrencyPolicy}</dd>
<dt>Next tick</dt><dd>${time(ctx, ctx.ticks.nextTick(job, ctx.now), job.timezone)}</dd>
<dt>Last scheduled</dt><dd>${time(ctx, job.lastScheduleTime, job.timezone)}</dd>
<dt>Last success</dt><dd>${time(ctx, job.lastSuccessfulTime, job.timezone)}</dd>
<dt>Succeeded / failed / skipped</dt><dd>${job.succeeded} / ${job.failed} / ${job.skipped}</dd>
${job.startingDeadlineMs === undefined ? '' : html`<dt>Starting deadline</dt><dd>${describeDuration(job.startingDeadlineMs)}</dd>`}
${job.pendingTimeoutMs === undefined ? '' : html`<dt>Pending timeout</dt><dd>${describeDuration(job.pendingTimeoutMs)}</dd>`}
${fanOut === undefined ? '' : html`<dt>Fan-out</dt><dd>${fanOut.completions} completions, parallelism ${fanOut.parallelism}, ${job.retryLimit ?? 'any number of'} failed attempts allowed</dd>`}
<dt>Created</dt><dd>${time(ctx, job.createdAt, job.timezone)}</dd>
<dt>Pending backfills</dt><dd>${job.backfills.length === 0 ? html`<span class="muted">none</span>` : job.backfills.map((range) => html`<div>next ${iso(range.next)} → ${iso(range.to)}</div>`)}</dd>
</dl>`;
}

function jobActions(ctx: PageContext, job: JobRecord): Html {
  const action = (name: string): string => `${jobHref(ctx, job.name)}/${name}`;
  const csrf = html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
  return html`<div class="actions">
<form class="card" method="post" action="${action('trigger')}" id="trigger-form">${csrf}<label for="trigger-data">Run now, with data (JSON; empty: the job's own)</label>
<textarea id="trigger-data" name="data" rows="3" placeholder='{"region": "eu"}'></textarea>
<input type="text" name="idempotencyKey" placeholder="idempotency key (optional)" aria-label="idempotency key"><button type="submit" id="trigger">Trigger</button></form>
<form class="card" method="post" action="${action(job.suspended ? 'resume' : 'pause')}">${csrf}<span>${job.suspended ? 'Suspended: no runs for new ticks.' : 'Active.'}</span>
${job.suspended ? html`<button type="submit" id="resume">Resume</button>` : html`<button type="submit" id="pause" class="secondary">Pause</button>`}</form>
<form class="card" method="post" action="${action('backfill')}">${csrf}<span>Backfill every tick in [from, to]</span>
<input type="text" name="from" placeholder="from: 2026-01-01T00:00:00Z" aria-label="from"><input type="text" name="to" placeholder="to: 2026-01-02T00:00:00Z" aria-label="to"><button type="submit" id="backfill">Backfill</button></form>
</div>`;
}

function ticksTable(ctx: PageContext, job: JobRecord, ticks: readonly Tick[]): Html {
  if (ticks.length === 0) return html`<p class="muted">The schedule has no more ticks.</p>`;
  return html`<table><thead><tr><th>#</th><th>UTC</th><th>${job.timezone}</th><th>Daylight saving</th><th>When</th></tr></thead><tbody>${ticks.map(
    (tick, i) => html`<tr><td class="num">${i + 1}</td><td><code>${tick.at.toISOString()}</code></td><td><code>${tick.local.replace('T', ' ').replace(/:00$/, '')} ${tick.offset}</code></td><td>${dstCell(tick)}</td><td>${time(ctx, tick.at.getTime())}</td></tr>`,
  )}</tbody></table>`;
}

function dstCell(tick: Tick): Html | string {
  if (tick.shiftedFrom !== undefined) {
    return html`<span class="dst" title="${tick.shiftedFrom.replace('T', ' ')} does not exist on this day (clocks go forward): the tick fires shifted forward by the gap">shifted: ${tick.shiftedFrom.slice(11, 16)} was skipped</span>`;
  }
  if (tick.repeated !== undefined) {
    return html`<span class="dst" title="This wall-clock time happens twice (clocks go back)">repeated hour, ${tick.repeated} occurrence</span>`;
  }
  return '';
}

function runsTable(ctx: PageContext, runs: readonly RunRecord[]): Html {
  if (runs.length === 0) return html`<p class="muted">No runs in the store.</p>`;
  return html`<table><thead><tr><th>Run</th><th>Trigger</th><th>Status</th><th>Attempt</th><th>Scheduled</th><th>Started</th><th>Duration</th><th>Lag</th><th>Fan-out</th><th>Error</th></tr></thead><tbody>${runs.map(
    (run) => html`<tr data-run="${run.id}"><td><a href="${runHref(ctx, run.id)}"><code>${run.id}</code></a></td><td>${run.trigger}</td><td>${statusBadge(run.status)}</td><td class="num">${run.attempt}</td>
<td>${time(ctx, run.scheduledAt)}</td><td>${time(ctx, run.startedAt)}</td><td class="num">${duration(ctx, run.startedAt, run.finishedAt)}</td><td class="num">${lag(run)}</td><td>${fanOutCell(run)}</td><td>${errorPreview(run.error)}</td></tr>`,
  )}</tbody></table>`;
}

export function runPage(ctx: PageContext, data: RunPageData): Html {
  const { run, job, indices } = data;
  return layout(
    ctx,
    run.id,
    html`<p><a href="${jobHref(ctx, run.jobName)}">← ${run.jobName}</a></p><h1><code>${run.id}</code></h1>
<section id="run" data-live><dl>
<dt>Status</dt><dd>${statusBadge(run.status)}</dd>
<dt>Job</dt><dd><a href="${jobHref(ctx, run.jobName)}">${run.jobName}</a>${job === undefined ? html` <span class="muted">(no longer in the store)</span>` : ''}</dd>
<dt>Trigger</dt><dd>${run.trigger}</dd>
<dt>Attempt</dt><dd>${run.attempt}</dd>
<dt>Scheduled at</dt><dd>${time(ctx, run.scheduledAt, job?.timezone)}</dd>
<dt>Created</dt><dd>${time(ctx, run.createdAt)}</dd>
<dt>Ready at</dt><dd>${time(ctx, run.readyAt)}</dd>
<dt>Started</dt><dd>${time(ctx, run.startedAt)}</dd>
<dt>Finished</dt><dd>${time(ctx, run.finishedAt)}</dd>
<dt>Duration</dt><dd>${duration(ctx, run.startedAt, run.finishedAt)}</dd>
<dt>Lag</dt><dd>${lag(run)}</dd>
${run.owner === undefined ? '' : html`<dt>Owner</dt><dd><code>${run.owner}</code> (lease until ${iso(run.leaseUntil)})</dd>`}
${run.deadlineAt === undefined ? '' : html`<dt>Deadline</dt><dd>${time(ctx, run.deadlineAt)}</dd>`}
${run.pendingUntil === undefined ? '' : html`<dt>Fails unclaimed at</dt><dd>${time(ctx, run.pendingUntil)}</dd>`}
${run.expiresAt === undefined ? '' : html`<dt>Deleted at</dt><dd>${time(ctx, run.expiresAt)}</dd>`}
<dt>Error</dt><dd>${run.error === undefined ? html`<span class="muted">none</span>` : html`<pre class="error">${run.error.name}: ${run.error.message}</pre>`}</dd>
<dt>Data</dt><dd>${run.data === undefined ? html`<span class="muted">the job's own data</span>` : html`<pre class="data">${JSON.stringify(run.data, null, 2)}</pre>`}</dd>
${run.fanOut === undefined ? '' : html`<dt>Fan-out</dt><dd>${fanOutCell(run)}</dd>`}
</dl>${run.fanOut === undefined ? '' : indicesTable(ctx, run, indices)}</section>`,
    { job: run.jobName, run: run.id },
  );
}

function indicesTable(ctx: PageContext, run: RunRecord, indices: readonly IndexRecord[]): Html {
  const total = run.fanOut?.completions ?? 0;
  return html`<h2>Indices</h2><p class="muted small">${indices.length} of ${total} started at least once; the others have not started.</p>
<table><thead><tr><th>Index</th><th>Status</th><th>Attempt</th><th>Started</th><th>Finished</th><th>Duration</th><th>Owner</th><th>Error</th></tr></thead><tbody>${indices.map(
    (index) => html`<tr><td class="num">${index.index}</td><td>${statusBadge(index.status)}</td><td class="num">${index.attempt}</td><td>${time(ctx, index.startedAt)}</td><td>${time(ctx, index.finishedAt)}</td>
<td class="num">${duration(ctx, index.startedAt, index.finishedAt)}</td><td><code>${index.owner ?? ''}</code></td><td>${errorPreview(index.error)}</td></tr>`,
  )}</tbody></table>`;
}

export function messagePage(ctx: PageContext, title: string, message: Html | string): Html {
  return layout(ctx, title, html`<h1>${title}</h1><p>${message}</p><p><a href="${ctx.base}/">All jobs</a></p>`);
}

function jobHref(ctx: PageContext, name: string): string {
  return `${ctx.base}/jobs/${encodeURIComponent(name)}`;
}

function runHref(ctx: PageContext, id: string): string {
  return `${ctx.base}/runs/${encodeURIComponent(id)}`;
}

function scheduleCell(job: JobRecord): Html {
  const schedule = job.schedule;
  const written = schedule.kind === 'cron' ? schedule.expression : schedule.kind === 'at' ? `{ at: ${iso(schedule.at)} }` : `{ every: '${compactDuration(schedule.everyMs)}' }`;
  return html`<code>${written}</code><div class="muted small">${describeSchedule(schedule)}</div>`;
}

function stateBadge(job: JobRecord): Html {
  return job.suspended ? html`<span class="badge s-suspended">suspended</span>` : html`<span class="badge s-active">active</span>`;
}

function statusBadge(status: string): Html {
  return html`<span class="badge s-${status}">${status}</span>`;
}

function fanOutCell(run: RunRecord): Html | string {
  const fanOut = run.fanOut;
  if (fanOut === undefined) return '';
  return html`<span title="${fanOut.active} running, ${fanOut.failed} failed attempts">${fanOut.succeeded}/${fanOut.completions} done, ${fanOut.active} running${fanOut.failed === 0 ? '' : `, ${fanOut.failed} failed`}</span>`;
}

function errorPreview(error: RunRecord['error']): Html | string {
  if (error === undefined) return '';
  const text = `${error.name}: ${error.message}`;
  return html`<span class="error" title="${text}">${text.length > ERROR_PREVIEW ? `${text.slice(0, ERROR_PREVIEW)}…` : text}</span>`;
}

function iso(at: number | undefined): string {
  return at === undefined ? '' : new Date(at).toISOString();
}

/** An instant: relative to now (kept current by the page script), in UTC (and the job's zone) on hover. */
function time(ctx: PageContext, at: number | undefined, timezone?: string): Html {
  if (at === undefined) return html`<span class="muted">—</span>`;
  const title = timezone === undefined || timezone === 'UTC' ? iso(at) : `${iso(at)} · ${ctx.ticks.wallTime(at, timezone)}`;
  return html`<time datetime="${iso(at)}" title="${title}" data-rel>${relative(at - ctx.now)}</time>`;
}

function relative(ms: number): string {
  const seconds = Math.round(Math.abs(ms) / 1000);
  const text = seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.round(seconds / 60)} min` : seconds < 172_800 ? `${Math.round(seconds / 3600)} h` : `${Math.round(seconds / 86_400)} d`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return describeDuration(Math.round(ms / 1000) * 1000);
}

function duration(ctx: PageContext, startedAt: number | undefined, finishedAt: number | undefined): string {
  if (startedAt === undefined) return '';
  return finishedAt === undefined ? `${formatMs(Math.max(0, ctx.now - startedAt))} so far` : formatMs(finishedAt - startedAt);
}

/** How late the run started: after its tick (scheduled runs), after its creation (manual and backfill runs). */
function lag(run: RunRecord): string {
  if (run.startedAt === undefined) return '';
  return formatMs(Math.max(0, run.startedAt - (run.trigger === 'schedule' ? run.scheduledAt : run.createdAt)));
}

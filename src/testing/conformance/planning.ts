/** Conformance: jobs, the atomic create-run-and-advance-cursor under each policy, manual runs and backfills. */
import { LIST_JOBS_PAGE, UPSERT_BATCH, type NewRun } from '../../store.js';
import { MINUTE, T0, scheduled, spec, upsertJob, type Fixture } from './fixtures.js';

export function planningTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, tick, claim, succeed, created, watching, notified } = fx;
  describe('jobs', () => {
    it('creates a job with its initial cursor and zero counters', () =>
      withStore(async (store) => {
        const { job, created } = await upsertJob(store, { spec: spec('a'), now: T0, initialCursor: T0 - 5 });
        expect(created).toBe(true);
        expect(job).toMatchObject({ name: 'a', cursor: T0 - 5, createdAt: T0, suspended: false, succeeded: 0, failed: 0, skipped: 0, backfills: [] });
        expect(job.lastScheduleTime).toBeUndefined();
        expect(await store.getJob('a')).toEqual(job);
      }));

    it('updates the spec of an existing job but keeps its cursor, counters and suspend flag', () =>
      withStore(async (store) => {
        await job(store, 'a');
        await store.setSuspended({ name: 'a', suspended: true, now: T0 });
        await tick(store, 'a', 1);
        const { job: updated, created } = await upsertJob(store, {
          spec: { ...spec('a', 'Forbid'), schedule: { kind: 'cron', expression: '*/5 * * * *' } },
          now: T0 + 10 * MINUTE,
          initialCursor: T0 + 10 * MINUTE,
        });
        expect(created).toBe(false);
        expect(updated).toMatchObject({ cursor: T0, createdAt: T0, suspended: true, concurrencyPolicy: 'Forbid' });
        expect(updated.schedule).toEqual({ kind: 'cron', expression: '*/5 * * * *' });
        const resumed = await upsertJob(store, { spec: spec('a'), now: T0, initialCursor: T0, suspended: false });
        expect(resumed.job.suspended).toBe(false);
      }));

    it('upserts a batch in order, one result per input, each job as a single upsert would', () =>
      withStore(async (store) => {
        await job(store, 'b');
        await tick(store, 'b', 1);
        const results = await store.upsertJobs([
          { spec: spec('a'), now: T0 + MINUTE, initialCursor: T0 + MINUTE },
          { spec: spec('b', 'Forbid'), now: T0 + MINUTE, initialCursor: T0 + MINUTE, suspended: true },
          { spec: spec('a', 'Replace'), now: T0 + 2 * MINUTE, initialCursor: T0 + 2 * MINUTE },
        ]);
        expect(results.map((r) => [r.job.name, r.created, r.job.concurrencyPolicy])).toEqual([
          ['a', true, 'Allow'],
          ['b', false, 'Forbid'],
          ['a', false, 'Replace'], // the batch's first input had created it
        ]);
        // Existing state is kept, the spec replaced: b keeps its cursor; a keeps the creation of its first upsert.
        expect(results[1]?.job).toMatchObject({ cursor: T0 + MINUTE, createdAt: T0, suspended: true });
        expect(await store.getJob('a')).toMatchObject({ concurrencyPolicy: 'Replace', createdAt: T0 + MINUTE, cursor: T0 + MINUTE });
        expect(await store.upsertJobs([])).toEqual([]);
      }));

    it('replaces the spec as a whole: a field dropped from the definition is dropped', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: { ...spec('a'), startingDeadlineMs: 5_000 }, now: T0, initialCursor: T0 });
        expect((await store.getJob('a'))?.startingDeadlineMs).toBe(5_000);
        const { job: updated } = await upsertJob(store, { spec: spec('a'), now: T0, initialCursor: T0 });
        expect(updated.startingDeadlineMs).toBeUndefined();
        expect((await store.getJob('a'))?.startingDeadlineMs).toBeUndefined();
      }));

    it('lists jobs by name and removes a job with all its runs', () =>
      withStore(async (store) => {
        await job(store, 'b');
        await job(store, 'a');
        await tick(store, 'a', 1);
        expect((await store.listJobs()).map((j) => j.name)).toEqual(['a', 'b']);
        expect(await store.removeJob('a')).toBe(true);
        expect(await store.removeJob('a')).toBe(false);
        expect(await store.getJob('a')).toBeUndefined();
        expect(await store.getRun(`a.${(T0 + MINUTE) / 1000}`)).toBeUndefined();
        expect(await store.listRuns({ jobName: 'a' })).toEqual([]);
        expect((await store.listJobs()).map((j) => j.name)).toEqual(['b']);
      }));

    it('lists jobs in keyset pages by name: after a name, at most a limit', () =>
      withStore(async (store) => {
        // Code-point order: upper case before "-", digits, lower case; a name that is a prefix of another first.
        const names = ['b', 'a', 'a-1', 'a.2', 'B', 'a1', 'ab', '_x', 'z9'];
        await store.upsertJobs(names.map((name) => ({ spec: spec(name), now: T0, initialCursor: T0 })));
        const sorted = [...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        expect((await store.listJobs()).map((j) => j.name)).toEqual(sorted);
        const pages: string[][] = [];
        for (let page = await store.listJobs({ limit: 4 }); page.length > 0; page = await store.listJobs({ limit: 4, after: page.at(-1)?.name as string })) {
          pages.push(page.map((j) => j.name));
        }
        expect(pages).toEqual([sorted.slice(0, 4), sorted.slice(4, 8), sorted.slice(8)]);
        // `after` need not be a job's name; without a limit, every job after it.
        expect((await store.listJobs({ after: 'a0' })).map((j) => j.name)).toEqual(sorted.filter((n) => n > 'a0'));
        expect((await store.listJobs({ after: 'a', limit: 2 })).map((j) => j.name)).toEqual(['a-1', 'a.2']);
        expect(await store.listJobs({ after: 'zz', limit: 10 })).toEqual([]);
        // A page holds the same records as the whole listing.
        expect(await store.listJobs({ limit: 1 })).toEqual([await store.getJob(sorted[0] as string)]);
      }));

    it('lists every job without a limit, however many pages of LIST_JOBS_PAGE they fill', () =>
      withStore(async (store) => {
        const names = Array.from({ length: 2 * LIST_JOBS_PAGE + 1 }, (_, i) => `j${String(i).padStart(5, '0')}`);
        for (let i = 0; i < names.length; i += UPSERT_BATCH) {
          await store.upsertJobs(names.slice(i, i + UPSERT_BATCH).map((name) => ({ spec: spec(name), now: T0, initialCursor: T0 })));
        }
        expect((await store.listJobs()).map((j) => j.name)).toEqual(names);
        expect((await store.listJobs({ after: names[LIST_JOBS_PAGE] as string })).map((j) => j.name)).toEqual(names.slice(LIST_JOBS_PAGE + 1));
      }));

    it('sets the shared suspend flag', () =>
      withStore(async (store) => {
        await job(store, 'a');
        expect(await store.setSuspended({ name: 'a', suspended: true, now: T0 })).toEqual({ job: await store.getJob('a'), cancelled: [] });
        expect((await store.getJob('a'))?.suspended).toBe(true);
        expect((await store.setSuspended({ name: 'a', suspended: false, now: T0 }))?.job.suspended).toBe(false);
        expect(await store.setSuspended({ name: 'missing', suspended: true, now: T0 })).toBeUndefined();
      }));

    it('an upsert that suspends an existing job cancels its runs created ahead, as setSuspended does', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const ahead = await created(store, 'a', 1, T0 + MINUTE - 200);
        const now = T0 + MINUTE - 100;
        expect((await upsertJob(store, { spec: spec('a'), now, initialCursor: now })).cancelled).toBeUndefined();
        expect((await store.getRun(ahead.id))?.status).toBe('pending');
        const result = await upsertJob(store, { spec: spec('a'), now, initialCursor: now, suspended: true });
        expect(result.job).toMatchObject({ suspended: true, cursor: T0 + MINUTE });
        expect(result.cancelled?.map((run) => [run.id, run.status, run.finishedAt])).toEqual([[ahead.id, 'cancelled', now]]);
        expect(await store.getRun(ahead.id)).toEqual(result.cancelled?.[0]);
        expect((await upsertJob(store, { spec: spec('b'), now, initialCursor: now, suspended: true })).cancelled).toBeUndefined();
      }));

    it('suspending cancels the runs created ahead of a tick still to come, and only those', () =>
      withStore(async (store) => {
        await job(store, 'a');
        await watching(store, async (seen) => {
          const due = await created(store, 'a', 1); // created at its tick: due, left alone
          const ahead = await created(store, 'a', 2, T0 + 2 * MINUTE - 200);
          const manual = await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0 + 2 * MINUTE - 100, trigger: 'manual', readyAt: T0 + 2 * MINUTE - 100 }, now: T0 + 2 * MINUTE - 100 });
          const now = T0 + 2 * MINUTE - 50;
          const result = await store.setSuspended({ name: 'a', suspended: true, now });
          expect(result?.job).toMatchObject({ suspended: true, cursor: T0 + 2 * MINUTE });
          expect(result?.cancelled).toHaveLength(1);
          expect(result?.cancelled[0]).toMatchObject({ id: ahead.id, scheduledAt: T0 + 2 * MINUTE, status: 'cancelled', finishedAt: now });
          expect(await store.getRun(ahead.id)).toEqual(result?.cancelled[0]);
          expect((await store.getRun(due.id))?.status).toBe('pending');
          expect(manual.outcome === 'created' && (await store.getRun(manual.run.id))?.status).toBe('pending');
          expect(await store.claimRun({ runId: ahead.id, owner: 'p', now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).toBeUndefined();
          await notified(store, () => expect(seen).toContainEqual({ type: 'run-finished', jobName: 'a', runId: ahead.id, status: 'cancelled' }));
        });
      }));
  });


  describe('scheduleRun', () => {
    it('creates a pending run and advances the cursor in one step', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const result = await tick(store, 'a', 1, T0 + MINUTE + 7);
        expect(result.outcome).toBe('created');
        if (result.outcome !== 'created') return;
        expect(result.run).toMatchObject({
          id: `a.${(T0 + MINUTE) / 1000}`,
          jobName: 'a',
          scheduledAt: T0 + MINUTE,
          trigger: 'schedule',
          status: 'pending',
          attempt: 1,
          createdAt: T0 + MINUTE + 7,
          readyAt: T0 + MINUTE + 7,
          fence: 0,
        });
        expect(result.job).toMatchObject({ cursor: T0 + MINUTE, lastScheduleTime: T0 + MINUTE });
        expect(await store.getRun(result.run.id)).toEqual(result.run);
      }));

    it('creates a run ahead of its tick ready at its tick, and claimable only from then', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: { ...spec('a'), pendingTimeoutMs: 5 * MINUTE }, now: T0, initialCursor: T0 });
        const early = T0 + MINUTE - 200;
        const run = await created(store, 'a', 1, early);
        expect(run).toMatchObject({ status: 'pending', createdAt: early, readyAt: T0 + MINUTE, pendingUntil: T0 + 6 * MINUTE });
        expect(await store.findReadyRuns({ jobNames: new Set(['a']), now: early + 100, limit: 10 })).toEqual({ runs: [], nextReadyAt: T0 + MINUTE });
        expect(await store.claimRun({ runId: run.id, owner: 'p', now: T0 + MINUTE - 1, leaseUntil: T0 + 2 * MINUTE })).toBeUndefined();
        expect((await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + MINUTE, limit: 10 })).runs.map((r) => r.id)).toEqual([run.id]);
        expect((await claim(store, run.id, 'p', T0 + MINUTE)).startedAt).toBe(T0 + MINUTE);
      }));

    it('writes nothing when the cursor is not the expected one', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const result = await store.scheduleRun({
          jobName: 'a',
          expectedCursor: T0 - 1,
          cursor: T0 + MINUTE,
          run: scheduled('a', T0 + MINUTE),
          now: T0 + MINUTE,
        });
        expect(result.outcome).toBe('conflict');
        expect((await store.getJob('a'))?.cursor).toBe(T0);
        expect(await store.listRuns({ jobName: 'a' })).toEqual([]);
      }));

    it('writes nothing for a suspended or missing job', () =>
      withStore(async (store) => {
        await job(store, 'a');
        await store.setSuspended({ name: 'a', suspended: true, now: T0 });
        expect((await tick(store, 'a', 1)).outcome).toBe('conflict');
        expect(await store.listRuns({ jobName: 'a' })).toEqual([]);
        const missing = await store.scheduleRun({ jobName: 'zz', expectedCursor: T0, cursor: T0 + 1, now: T0 });
        expect(missing.outcome).toBe('conflict');
      }));

    it('lets exactly one of many racing planners create the run for a tick', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const at = T0 + MINUTE;
        const results = await Promise.all(
          Array.from({ length: 8 }, () =>
            store.scheduleRun({ jobName: 'a', expectedCursor: T0, cursor: at, run: scheduled('a', at), now: at }),
          ),
        );
        expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
        expect(results.filter((r) => r.outcome === 'conflict')).toHaveLength(7);
        expect(await store.listRuns({ jobName: 'a' })).toHaveLength(1);
      }));

    it('advances the cursor without a run when every due tick was missed', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const result = await store.scheduleRun({ jobName: 'a', expectedCursor: T0, cursor: T0 + 5 * MINUTE, now: T0 + 60 * MINUTE });
        expect(result.outcome).toBe('advanced');
        expect((await store.getJob('a'))?.cursor).toBe(T0 + 5 * MINUTE);
        expect(await store.listRuns({ jobName: 'a' })).toEqual([]);
      }));

    it('treats an existing run ID as done and still advances the cursor', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const at = T0 + MINUTE;
        await store.createRun({ run: scheduled('a', at), now: at });
        const result = await store.scheduleRun({ jobName: 'a', expectedCursor: T0, cursor: at, run: scheduled('a', at), now: at });
        expect(result.outcome).toBe('exists');
        expect((await store.getJob('a'))?.cursor).toBe(at);
        expect(await store.listRuns({ jobName: 'a' })).toHaveLength(1);
      }));

    it('Allow creates a run while another is active', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Allow');
        await tick(store, 'a', 1);
        expect((await tick(store, 'a', 2)).outcome).toBe('created');
        expect(await store.listRuns({ jobName: 'a', statuses: ['pending'] })).toHaveLength(2);
      }));

    it('Forbid skips the tick while a run is active, counts it, and moves the cursor', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Forbid');
        await tick(store, 'a', 1);
        const result = await tick(store, 'a', 2);
        expect(result.outcome).toBe('skipped');
        expect(await store.getJob('a')).toMatchObject({ skipped: 1, cursor: T0 + 2 * MINUTE });
        expect(await store.listRuns({ jobName: 'a' })).toHaveLength(1);
      }));

    it('Forbid counts a run waiting to retry as active', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Forbid');
        const first = await tick(store, 'a', 1);
        if (first.outcome !== 'created') throw new Error('setup');
        const running = await claim(store, first.run.id);
        await store.finishAttempt({
          runId: running.id, owner: 'a', fence: running.fence, now: T0 + MINUTE,
          outcome: { status: 'retry', error: { name: 'Error', message: 'x' }, readyAt: T0 + 10 * MINUTE },
        });
        expect((await tick(store, 'a', 2)).outcome).toBe('skipped');
      }));

    it('CatchUp writes nothing while a run is active', () =>
      withStore(async (store) => {
        await job(store, 'a', 'CatchUp');
        await tick(store, 'a', 1);
        const result = await tick(store, 'a', 2);
        expect(result.outcome).toBe('blocked');
        expect(await store.getJob('a')).toMatchObject({ cursor: T0 + MINUTE, skipped: 0 });
        expect(await store.listRuns({ jobName: 'a' })).toHaveLength(1);
      }));

    it('Replace cancels the active runs, then creates the new one', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Replace');
        const first = await tick(store, 'a', 1);
        if (first.outcome !== 'created') throw new Error('setup');
        const running = await claim(store, first.run.id);
        const result = await tick(store, 'a', 2);
        expect(result.outcome).toBe('created');
        if (result.outcome !== 'created') return;
        expect(result.cancelled.map((r) => r.id)).toEqual([first.run.id]);
        expect(await store.getRun(first.run.id)).toMatchObject({ status: 'cancelled', finishedAt: T0 + 2 * MINUTE });
        const renewal = await store.renewLease({ runId: running.id, owner: 'a', fence: running.fence, now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE });
        expect(renewal).toEqual({ ok: false, status: 'cancelled' });
        expect((await store.getJob('a'))).toMatchObject({ succeeded: 0, failed: 0 });
      }));
  });


  describe('manual runs and backfills', () => {
    it('creates a manual run once per ID', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const run: NewRun = { id: 'a.manual.k1', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0, data: { x: [1, 'two', null] } };
        const first = await store.createRun({ run, now: T0 });
        expect(first.outcome).toBe('created');
        const again = await store.createRun({ run: { ...run, data: 'other' }, now: T0 + 1 });
        expect(again.outcome).toBe('exists');
        if (again.outcome === 'missing-job') return;
        expect(again.run.data).toEqual({ x: [1, 'two', null] });
        expect((await store.createRun({ run: { ...run, jobName: 'zz', id: 'zz.manual.1' }, now: T0 })).outcome).toBe('missing-job');
      }));

    it('runs a backfill one tick at a time and drops the range at its end', () =>
      withStore(async (store) => {
        await job(store, 'a');
        const range = { id: 'b1', next: T0 - 2 * MINUTE, to: T0 - MINUTE };
        expect((await store.addBackfill({ jobName: 'a', range }))?.backfills).toEqual([range]);
        const run1 = { id: `a.backfill.${range.next / 1000}`, jobName: 'a', scheduledAt: range.next, trigger: 'backfill' as const, readyAt: T0 };
        const first = await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b1', expectedNext: range.next, next: range.to, run: run1, now: T0 });
        expect(first.outcome).toBe('created');
        const run2 = { ...run1, id: `a.backfill.${range.to / 1000}`, scheduledAt: range.to };
        const blocked = await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b1', expectedNext: range.to, run: run2, now: T0 });
        expect(blocked.outcome).toBe('blocked');
        const stale = await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b1', expectedNext: range.next, run: run2, now: T0 });
        expect(stale.outcome).toBe('conflict');
        await succeed(store, await claim(store, run1.id, 'a', T0), T0 + 1);
        const last = await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b1', expectedNext: range.to, run: run2, now: T0 + 2 });
        expect(last.outcome).toBe('created');
        expect((await store.getJob('a'))?.backfills).toEqual([]);
      }));

    it("keeps the creating call's traceparent with manual and backfill runs and their range, and only when given", () =>
      withStore(async (store) => {
        const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        const other = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
        await job(store, 'a');
        const manual = await store.createRun({ run: { id: 'a.manual.t', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0, traceparent: caller }, now: T0 });
        expect(manual.outcome === 'missing-job' ? undefined : manual.run.traceparent).toBe(caller);
        expect((await claim(store, 'a.manual.t', 'a', T0)).traceparent).toBe(caller);
        const plain = await store.createRun({ run: { id: 'a.manual.u', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        expect(plain.outcome === 'missing-job' ? 'missing' : 'traceparent' in plain.run).toBe(false);
        const range = { id: 'b1', next: T0 - 2 * MINUTE, to: T0 - MINUTE, traceparent: other };
        expect((await store.addBackfill({ jobName: 'a', range }))?.backfills).toEqual([range]);
        const run1 = { id: `a.backfill.${range.next / 1000}`, jobName: 'a', scheduledAt: range.next, trigger: 'backfill' as const, readyAt: T0, traceparent: other };
        const first = await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b1', expectedNext: range.next, next: range.to, run: run1, now: T0 });
        expect(first.outcome === 'created' ? first.run.traceparent : undefined).toBe(other);
        // The range keeps it as it moves on.
        expect((await store.getJob('a'))?.backfills).toEqual([{ ...range, next: range.to }]);
        expect((await store.getRun(run1.id))?.traceparent).toBe(other);
      }));
  });

  describe('identity', () => {
    it('identity() (optional) is the same on every call while the data lives', () =>
      withStore(async (store) => {
        if (store.identity === undefined) return;
        const first = await store.identity();
        expect(first).toBeDefined();
        await job(store, 'a');
        expect(await store.identity()).toBe(first);
      }));
  });
}

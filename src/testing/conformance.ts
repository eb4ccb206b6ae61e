/**
 * The store conformance suite: one call registers vitest tests that prove a store
 * against the contract in `src/store.ts` (atomic create, cursor compare-and-set,
 * policies, leases, fencing, recovery, history pruning, backfills, notifications
 * and the lock). Every test gets a fresh store from the factory, so a factory that
 * hands each store its own namespace (key prefix, schema) lets suites run in
 * parallel against one server.
 */
import type {
  ConcurrencyPolicy,
  JobSpec,
  NewRun,
  RunRecord,
  Store,
  StoreNotification,
} from '../store.js';

/** The matchers the suite uses: vitest's and jest's `expect` both provide them. */
export interface ConformanceAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeUndefined(): void;
  toBeDefined(): void;
  toHaveLength(length: number): void;
  toContainEqual(expected: unknown): void;
  toBeGreaterThan(expected: number): void;
}

/** The test framework's functions, passed in so the suite runs under vitest or jest, ESM or CommonJS. */
export interface ConformanceTestApi {
  readonly describe: (name: string, body: () => void) => void;
  readonly it: (name: string, body: () => Promise<void>, timeout?: number) => void;
  readonly expect: (actual: unknown, message?: string) => ConformanceAssertion;
}

export interface StoreConformanceOptions extends ConformanceTestApi {
  /** Creates a fresh, empty store (its own namespace). `init()` is called by the suite. */
  readonly createStore: () => Store | Promise<Store>;
  /** Disposes of a store after its test; default: `store.close()`. */
  readonly destroyStore?: (store: Store) => void | Promise<void>;
}

/** Retries `check` until it stops throwing or `timeoutMs` passes: for notifications that travel through a server. */
async function eventually(check: () => void | Promise<void>, timeoutMs = 5_000, intervalMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (performance.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

function spec(name: string, concurrencyPolicy: ConcurrencyPolicy = 'Allow', history = { succeeded: 3, failed: 1 }): JobSpec {
  return { name, schedule: { kind: 'cron', expression: '* * * * *' }, timezone: 'UTC', concurrencyPolicy, history };
}

function scheduled(jobName: string, at: number): NewRun {
  return { id: `${jobName}.${at / 1000}`, jobName, scheduledAt: at, trigger: 'schedule' };
}

/**
 * Registers the conformance tests for a store under `describe(name)`:
 *
 * ```ts
 * import { describe, expect, it } from 'vitest';
 * storeConformance('MyStore', { describe, it, expect, createStore: () => new MyStore({ namespace: unique() }) });
 * ```
 */
export function storeConformance(name: string, options: StoreConformanceOptions): void {
  const { describe, it, expect } = options;
  async function withStore(test: (store: Store) => Promise<void>): Promise<void> {
    const store = await options.createStore();
    await store.init();
    try {
      await test(store);
    } finally {
      await (options.destroyStore ?? ((s: Store) => s.close()))(store);
    }
  }

  async function job(store: Store, jobName: string, policy: ConcurrencyPolicy = 'Allow', history?: { succeeded: number; failed: number }) {
    return (await store.upsertJob({ spec: spec(jobName, policy, history), now: T0, initialCursor: T0 })).job;
  }

  /** Creates the run for the tick one minute after the job's cursor. */
  async function tick(store: Store, jobName: string, minutes: number, now = T0 + minutes * MINUTE) {
    const current = await store.getJob(jobName);
    if (current === undefined) throw new Error(`test setup: job ${jobName} missing`);
    const at = T0 + minutes * MINUTE;
    return store.scheduleRun({ jobName, expectedCursor: current.cursor, cursor: at, run: scheduled(jobName, at), now });
  }

  async function claim(store: Store, runId: string, owner = 'a', now = T0 + MINUTE, leaseMs = 30_000) {
    const run = await store.claimRun({ runId, owner, now, leaseUntil: now + leaseMs });
    if (run === undefined) throw new Error(`test setup: could not claim ${runId}`);
    return run;
  }

  async function succeed(store: Store, run: RunRecord, now: number) {
    return store.finishAttempt({ runId: run.id, owner: run.owner ?? '', fence: run.fence, now, outcome: { status: 'succeeded' } });
  }

  describe(`${name}: store conformance`, () => {
    describe('jobs', () => {
      it('creates a job with its initial cursor and zero counters', () =>
        withStore(async (store) => {
          const { job, created } = await store.upsertJob({ spec: spec('a'), now: T0, initialCursor: T0 - 5 });
          expect(created).toBe(true);
          expect(job).toMatchObject({ name: 'a', cursor: T0 - 5, createdAt: T0, suspended: false, succeeded: 0, failed: 0, skipped: 0, backfills: [] });
          expect(job.lastScheduleTime).toBeUndefined();
          expect(await store.getJob('a')).toEqual(job);
        }));

      it('updates the spec of an existing job but keeps its cursor, counters and suspend flag', () =>
        withStore(async (store) => {
          await job(store, 'a');
          await store.setSuspended('a', true);
          await tick(store, 'a', 1);
          const { job: updated, created } = await store.upsertJob({
            spec: { ...spec('a', 'Forbid'), schedule: { kind: 'cron', expression: '*/5 * * * *' } },
            now: T0 + 10 * MINUTE,
            initialCursor: T0 + 10 * MINUTE,
          });
          expect(created).toBe(false);
          expect(updated).toMatchObject({ cursor: T0, createdAt: T0, suspended: true, concurrencyPolicy: 'Forbid' });
          expect(updated.schedule).toEqual({ kind: 'cron', expression: '*/5 * * * *' });
          const resumed = await store.upsertJob({ spec: spec('a'), now: T0, initialCursor: T0, suspended: false });
          expect(resumed.job.suspended).toBe(false);
        }));

      it('replaces the spec as a whole: a field dropped from the definition is dropped', () =>
        withStore(async (store) => {
          await store.upsertJob({ spec: { ...spec('a'), startingDeadlineMs: 5_000 }, now: T0, initialCursor: T0 });
          expect((await store.getJob('a'))?.startingDeadlineMs).toBe(5_000);
          const { job: updated } = await store.upsertJob({ spec: spec('a'), now: T0, initialCursor: T0 });
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

      it('sets the shared suspend flag', () =>
        withStore(async (store) => {
          await job(store, 'a');
          expect((await store.setSuspended('a', true))?.suspended).toBe(true);
          expect((await store.getJob('a'))?.suspended).toBe(true);
          expect(await store.setSuspended('missing', true)).toBeUndefined();
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
          await store.setSuspended('a', true);
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
          const run: NewRun = { id: 'a.manual.k1', jobName: 'a', scheduledAt: T0, trigger: 'manual', data: { x: [1, 'two', null] } };
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
          const run1 = { id: `a.backfill.${range.next / 1000}`, jobName: 'a', scheduledAt: range.next, trigger: 'backfill' as const };
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
    });

    describe('claims, leases and fencing', () => {
      it('finds ready runs of the given jobs, oldest first, and the next ready time', () =>
        withStore(async (store) => {
          await job(store, 'a');
          await job(store, 'b');
          await tick(store, 'a', 2, T0 + 2 * MINUTE);
          await tick(store, 'b', 1, T0 + MINUTE);
          await tick(store, 'a', 3, T0 + 9 * MINUTE);
          const found = await store.findReadyRuns({ jobNames: new Set(['a', 'b']), now: T0 + 5 * MINUTE, limit: 10 });
          expect(found.runs.map((r) => r.jobName)).toEqual(['b', 'a']);
          expect(found.nextReadyAt).toBe(T0 + 9 * MINUTE);
          const onlyA = await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + 10 * MINUTE, limit: 1 });
          expect(onlyA.runs.map((r) => r.scheduledAt)).toEqual([T0 + 2 * MINUTE]);
          expect(onlyA.nextReadyAt).toBeUndefined();
        }));

      it('lets exactly one of many racing instances claim a run, and bumps the fence', () =>
        withStore(async (store) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1);
          if (created.outcome !== 'created') throw new Error('setup');
          const claims = await Promise.all(
            ['p', 'q', 'r', 's', 't'].map((owner) =>
              store.claimRun({ runId: created.run.id, owner, now: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE, deadlineAt: T0 + 9 * MINUTE }),
            ),
          );
          const winners = claims.filter((c) => c !== undefined);
          expect(winners).toHaveLength(1);
          expect(winners[0]).toMatchObject({ status: 'running', fence: 1, startedAt: T0 + MINUTE, leaseUntil: T0 + 2 * MINUTE, deadlineAt: T0 + 9 * MINUTE });
        }));

      it('does not claim a run before its readyAt', () =>
        withStore(async (store) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1, T0 + MINUTE);
          if (created.outcome !== 'created') throw new Error('setup');
          expect(await store.claimRun({ runId: created.run.id, owner: 'a', now: T0, leaseUntil: T0 + MINUTE })).toBeUndefined();
          expect(await store.claimRun({ runId: 'nope', owner: 'a', now: T0, leaseUntil: T0 + MINUTE })).toBeUndefined();
        }));

      it('renews a lease only for its owner and fence', () =>
        withStore(async (store) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1);
          if (created.outcome !== 'created') throw new Error('setup');
          const run = await claim(store, created.run.id, 'a');
          const renew = (owner: string, fence: number) =>
            store.renewLease({ runId: run.id, owner, fence, now: T0 + MINUTE, leaseUntil: T0 + 5 * MINUTE });
          expect(await renew('b', run.fence)).toEqual({ ok: false, status: 'running' });
          expect(await renew('a', run.fence + 1)).toEqual({ ok: false, status: 'running' });
          expect(await renew('a', run.fence)).toEqual({ ok: true });
          expect((await store.getRun(run.id))?.leaseUntil).toBe(T0 + 5 * MINUTE);
        }));

      it('records success with counters and refuses a second, fenced-out finish', () =>
        withStore(async (store) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1);
          if (created.outcome !== 'created') throw new Error('setup');
          const run = await claim(store, created.run.id);
          const done = await succeed(store, run, T0 + 2 * MINUTE);
          expect(done.ok).toBe(true);
          expect(await store.getRun(run.id)).toMatchObject({ status: 'succeeded', finishedAt: T0 + 2 * MINUTE });
          expect(await store.getJob('a')).toMatchObject({ succeeded: 1, failed: 0, lastSuccessfulTime: T0 + 2 * MINUTE });
          expect((await succeed(store, run, T0 + 3 * MINUTE)).ok).toBe(false);
          expect((await store.getJob('a'))?.succeeded).toBe(1);
        }));

      it('schedules a retry, releases, and fails for good', () =>
        withStore(async (store) => {
          await job(store, 'a');
          const created = await tick(store, 'a', 1);
          if (created.outcome !== 'created') throw new Error('setup');
          const error = { name: 'TypeError', message: 'boom' };
          let run = await claim(store, created.run.id);
          const retry = await store.finishAttempt({ runId: run.id, owner: 'a', fence: run.fence, now: T0 + MINUTE, outcome: { status: 'retry', error, readyAt: T0 + 3 * MINUTE } });
          expect(retry.ok && retry.run).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + 3 * MINUTE, error });
          expect(await store.claimRun({ runId: run.id, owner: 'a', now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).toBeUndefined();
          run = await claim(store, run.id, 'b', T0 + 3 * MINUTE);
          expect(run).toMatchObject({ attempt: 2, fence: 2, startedAt: T0 + MINUTE });
          const released = await store.finishAttempt({ runId: run.id, owner: 'b', fence: run.fence, now: T0 + 4 * MINUTE, outcome: { status: 'released' } });
          expect(released.ok && released.run).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + 4 * MINUTE });
          expect((released.ok && released.run.owner) || undefined).toBeUndefined();
          run = await claim(store, run.id, 'c', T0 + 4 * MINUTE);
          await store.finishAttempt({ runId: run.id, owner: 'c', fence: run.fence, now: T0 + 5 * MINUTE, outcome: { status: 'failed', error } });
          expect(await store.getRun(run.id)).toMatchObject({ status: 'failed', attempt: 2, finishedAt: T0 + 5 * MINUTE, error });
          expect(await store.getJob('a')).toMatchObject({ succeeded: 0, failed: 1 });
        }));

      it('recovers runs whose lease expired, counting a failed attempt, and fences out the old owner', () =>
        withStore(async (store) => {
          await job(store, 'a');
          await job(store, 'b');
          const ra = await tick(store, 'a', 1);
          const rb = await tick(store, 'b', 1);
          if (ra.outcome !== 'created' || rb.outcome !== 'created') throw new Error('setup');
          const old = await claim(store, ra.run.id, 'dead', T0 + MINUTE, 10_000);
          await claim(store, rb.run.id, 'alive', T0 + MINUTE, 60_000);
          expect(await store.recoverExpiredRuns({ now: T0 + MINUTE + 10_000, limit: 10 })).toEqual([]);
          const recovered = await store.recoverExpiredRuns({ now: T0 + MINUTE + 10_001, limit: 10 });
          expect(recovered.map((r) => r.id)).toEqual([ra.run.id]);
          expect(recovered[0]).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + MINUTE + 10_001, error: { name: 'LeaseExpiredError' } });
          expect(recovered[0]?.owner).toBeUndefined();
          const taken = await claim(store, ra.run.id, 'b', T0 + 2 * MINUTE);
          expect(taken.fence).toBe(old.fence + 1);
          expect((await succeed(store, old, T0 + 2 * MINUTE)).ok).toBe(false);
          expect((await store.renewLease({ runId: old.id, owner: 'dead', fence: old.fence, now: T0 + 2 * MINUTE, leaseUntil: T0 + 3 * MINUTE })).ok).toBe(false);
          expect((await succeed(store, taken, T0 + 2 * MINUTE)).ok).toBe(true);
        }));
    });

    describe('history', () => {
      it('keeps the newest finished runs per limit and keeps the counters', () =>
        withStore(async (store) => {
          await job(store, 'a', 'Allow', { succeeded: 2, failed: 1 });
          const error = { name: 'Error', message: 'no' };
          for (let minute = 1; minute <= 6; minute += 1) {
            const created = await tick(store, 'a', minute);
            if (created.outcome !== 'created') throw new Error('setup');
            const run = await claim(store, created.run.id, 'a', T0 + minute * MINUTE);
            const outcome = minute % 2 === 0 ? { status: 'failed' as const, error } : { status: 'succeeded' as const };
            await store.finishAttempt({ runId: run.id, owner: 'a', fence: run.fence, now: T0 + minute * MINUTE + 1, outcome });
          }
          const left = await store.listRuns({ jobName: 'a' });
          expect(left.map((r) => [r.scheduledAt, r.status])).toEqual([
            [T0 + 6 * MINUTE, 'failed'],
            [T0 + 5 * MINUTE, 'succeeded'],
            [T0 + 3 * MINUTE, 'succeeded'],
          ]);
          expect(await store.getJob('a')).toMatchObject({ succeeded: 3, failed: 3 });
        }));

      it('never prunes active runs and lists newest first with filters', () =>
        withStore(async (store) => {
          await job(store, 'a', 'Allow', { succeeded: 0, failed: 0 });
          for (let minute = 1; minute <= 3; minute += 1) await tick(store, 'a', minute);
          const created = await tick(store, 'a', 4);
          if (created.outcome !== 'created') throw new Error('setup');
          await succeed(store, await claim(store, created.run.id, 'a', T0 + 4 * MINUTE), T0 + 4 * MINUTE);
          const all = await store.listRuns({ jobName: 'a' });
          expect(all.map((r) => r.scheduledAt)).toEqual([T0 + 3 * MINUTE, T0 + 2 * MINUTE, T0 + MINUTE]);
          expect((await store.listRuns({ jobName: 'a', statuses: ['pending'], limit: 2 })).map((r) => r.scheduledAt)).toEqual([
            T0 + 3 * MINUTE,
            T0 + 2 * MINUTE,
          ]);
          expect(await store.listRuns({ jobName: 'a', statuses: ['succeeded'] })).toEqual([]);
        }));
    });

    describe('notifications', () => {
      it('tells watchers about ready runs, finished runs and changed jobs', () =>
        withStore(async (store) => {
          const seen: StoreNotification[] = [];
          const unwatch = store.watch((n) => seen.push(n));
          try {
            // Let a store with a subscription connection finish subscribing.
            await eventually(async () => {
              await store.upsertJob({ spec: spec('probe'), now: T0, initialCursor: T0 });
              expect(seen.some((n) => n.type === 'job-changed' && n.jobName === 'probe')).toBe(true);
            }, 5_000, 50);
            await job(store, 'a');
            const created = await tick(store, 'a', 1);
            if (created.outcome !== 'created') throw new Error('setup');
            await succeed(store, await claim(store, created.run.id), T0 + MINUTE);
            await eventually(() => {
              expect(seen).toContainEqual({ type: 'job-changed', jobName: 'a' });
              expect(seen).toContainEqual({ type: 'run-ready', jobName: 'a', runId: created.run.id, readyAt: T0 + MINUTE });
              expect(seen).toContainEqual({ type: 'run-finished', jobName: 'a', runId: created.run.id, status: 'succeeded' });
            });
          } finally {
            unwatch();
          }
        }));
    });

    describe('lock', () => {
      it('elects one holder, renews, expires and hands over with a larger token', () =>
        withStore(async (store) => {
          const lock = store.lock();
          const racing = await Promise.all(
            ['p', 'q', 'r'].map((owner) => lock.acquire({ name: 'planner', owner, now: T0, leaseUntil: T0 + 1_000 })),
          );
          const holders = racing.filter((l) => l !== undefined);
          expect(holders).toHaveLength(1);
          const first = holders[0]!;
          const other = first.owner === 'p' ? 'q' : 'p';
          expect(await lock.acquire({ name: 'planner', owner: other, now: T0 + 500, leaseUntil: T0 + 1_500 })).toBeUndefined();
          expect(await lock.renew({ name: 'planner', owner: first.owner, token: first.token, now: T0 + 900, leaseUntil: T0 + 2_000 })).toBe(true);
          expect(await lock.acquire({ name: 'planner', owner: other, now: T0 + 1_500, leaseUntil: T0 + 2_500 })).toBeUndefined();
          const again = await lock.acquire({ name: 'planner', owner: first.owner, now: T0 + 1_600, leaseUntil: T0 + 2_600 });
          expect(again?.token).toBe(first.token);
          const taken = await lock.acquire({ name: 'planner', owner: other, now: T0 + 2_601, leaseUntil: T0 + 3_601 });
          expect(taken?.token).toBeGreaterThan(first.token);
          expect(await lock.renew({ name: 'planner', owner: first.owner, token: first.token, now: T0 + 2_700, leaseUntil: T0 + 4_000 })).toBe(false);
          await lock.release({ name: 'planner', owner: first.owner, token: first.token });
          expect(await lock.acquire({ name: 'planner', owner: 'z', now: T0 + 2_800, leaseUntil: T0 + 3_800 })).toBeUndefined();
          await lock.release({ name: 'planner', owner: other, token: taken!.token });
          const after = await lock.acquire({ name: 'planner', owner: 'z', now: T0 + 2_900, leaseUntil: T0 + 3_900 });
          expect(after?.token).toBeGreaterThan(taken!.token);
          expect(await lock.acquire({ name: 'other-lock', owner: 'y', now: T0 + 2_900, leaseUntil: T0 + 3_900 })).toBeDefined();
        }));
    });
  });
}

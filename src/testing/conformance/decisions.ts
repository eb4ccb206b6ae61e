/**
 * Conformance: the decisions the core makes and the store keeps (each in one place,
 * issue 15), one function per capability: a run's `readyAt` is kept as the core hands
 * it (jobs and cursors); the retry limit in the job spec decides, in the store, whether
 * a failed attempt of a plain run is retried, a lost lease included, as it does for
 * fan-out runs (the run queue); a `run-ready` notification carries the `pendingUntil`
 * the store set (notifications).
 */
import { LEASE_EXPIRED_ERROR, type JobSpec } from '../../store.js';
import { ERROR, MINUTE, T0, spec, upsertJob, type Fixture } from './fixtures.js';

function limited(name: string, retryLimit: number | undefined, extra: Partial<JobSpec> = {}): JobSpec {
  const base = { ...spec(name, 'Allow', { succeeded: 3, failed: 3 }), ...extra };
  return retryLimit === undefined ? base : { ...base, retryLimit };
}

/** Jobs and cursors: runs are created at the `readyAt` the core hands in. */
export function readyAtTests(fx: Fixture): void {
  const { describe, it, expect, withStore, claim } = fx;
  describe('readyAt, as the core hands it', () => {
    it('creates manual and backfill runs at the given readyAt, before or after now, claimable from then', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: limited('a', 0, { pendingTimeoutMs: MINUTE }), now: T0, initialCursor: T0 });
        const later = await store.createRun({ run: { id: 'a.manual.later', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 + 5_000 }, now: T0 });
        expect(later.outcome === 'created' && later.run).toMatchObject({ readyAt: T0 + 5_000, pendingUntil: T0 + 5_000 + MINUTE });
        expect(await store.claimRun({ runId: 'a.manual.later', owner: 'o', now: T0 + 4_999, leaseUntil: T0 + MINUTE })).toBeUndefined();
        expect((await claim(store, 'a.manual.later', 'o', T0 + 5_000)).status).toBe('running');
        const earlier = await store.createRun({ run: { id: 'a.manual.earlier', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 - 1_000 }, now: T0 });
        expect(earlier.outcome === 'created' && earlier.run).toMatchObject({ readyAt: T0 - 1_000, pendingUntil: T0 + MINUTE });
        await store.addBackfill({ jobName: 'a', range: { id: 'b', next: T0 - MINUTE, to: T0 - MINUTE } });
        const backfill = await store.scheduleBackfillRun({
          jobName: 'a', backfillId: 'b', expectedNext: T0 - MINUTE, now: T0,
          run: { id: `a.backfill.${(T0 - MINUTE) / 1000}`, jobName: 'a', scheduledAt: T0 - MINUTE, trigger: 'backfill', readyAt: T0 + 7_000 },
        });
        expect(backfill.outcome === 'created' && backfill.run.readyAt).toBe(T0 + 7_000);
      }));
  });

}

/** The run queue: the retry limit of the job spec, for plain runs as for fan-out runs. */
export function retryLimitTests(fx: Fixture): void {
  const { describe, it, expect, withStore, claim, created, notified, watching } = fx;
  describe('the retry limit, in the job spec', () => {
    it('retries a failed attempt of a plain run while its attempt is within retryLimit, then fails the run', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: limited('a', 1), now: T0, initialCursor: T0 });
        const run = await created(store, 'a', 1);
        let mine = await claim(store, run.id, 'p', T0 + MINUTE);
        const retried = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now: T0 + MINUTE + 1, outcome: { status: 'retry', error: ERROR, readyAt: T0 + MINUTE + 10 } });
        expect(retried.ok && retried.run).toMatchObject({ status: 'pending', attempt: 2, readyAt: T0 + MINUTE + 10, error: ERROR });
        mine = await claim(store, run.id, 'p', T0 + MINUTE + 10);
        const last = { name: 'Error', message: 'again' };
        const failed = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now: T0 + MINUTE + 20, outcome: { status: 'retry', error: last, readyAt: T0 + MINUTE + 30 } });
        expect(failed.ok && failed.run).toMatchObject({ status: 'failed', attempt: 2, finishedAt: T0 + MINUTE + 20, error: last });
        expect(failed.ok && failed.run.owner).toBeUndefined();
        expect(await store.getJob('a')).toMatchObject({ failed: 1, succeeded: 0 });
        expect((await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + 2 * MINUTE, limit: 10 })).runs).toEqual([]);
      }));

    it('fails a recovered plain run whose lost attempt was the last retryLimit allows, with LEASE_EXPIRED_ERROR', () =>
      withStore((store) =>
        watching(store, async (seen) => {
          await upsertJob(store, { spec: limited('a', 0), now: T0, initialCursor: T0 });
          await upsertJob(store, { spec: limited('b', 1), now: T0, initialCursor: T0 });
          const a = await created(store, 'a', 1);
          const b = await created(store, 'b', 1);
          await claim(store, a.id, 'gone', T0 + MINUTE, 1_000);
          await claim(store, b.id, 'gone', T0 + MINUTE, 1_000);
          const recovered = await store.recoverExpiredRuns({ now: T0 + MINUTE + 2_000, limit: 10 });
          expect(recovered.map((run) => [run.id, run.status, run.attempt])).toEqual([[a.id, 'failed', 1], [b.id, 'pending', 2]]);
          expect(recovered[0]).toMatchObject({ error: LEASE_EXPIRED_ERROR, finishedAt: T0 + MINUTE + 2_000 });
          expect(recovered[0]?.owner).toBeUndefined();
          expect(await store.getJob('a')).toMatchObject({ failed: 1 });
          await notified(store, () => expect(seen).toContainEqual({ type: 'run-finished', jobName: 'a', runId: a.id, status: 'failed' }));
          // b had a retry left: recovered, and its next lost attempt is its last.
          await claim(store, b.id, 'gone', T0 + MINUTE + 2_000, 1_000);
          const again = await store.recoverExpiredRuns({ now: T0 + MINUTE + 4_000, limit: 10 });
          expect(again.map((run) => [run.id, run.status, run.attempt])).toEqual([[b.id, 'failed', 2]]);
        }),
      ));

    it('does not limit the retries of a job whose spec has no retryLimit', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: limited('a', undefined), now: T0, initialCursor: T0 });
        const run = await created(store, 'a', 1);
        for (let attempt = 1; attempt <= 3; attempt += 1) {
          const now = T0 + MINUTE + attempt * 10;
          const mine = await claim(store, run.id, 'p', now);
          const retried = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now, outcome: { status: 'retry', error: ERROR, readyAt: now } });
          expect(retried.ok && retried.run).toMatchObject({ status: 'pending', attempt: attempt + 1 });
        }
      }));
  });

}

/** Notifications: `run-ready` carries the run's `pendingUntil`. */
export function pendingUntilNotificationTests(fx: Fixture, required: boolean): void {
  const { describe, it, expect, withStore, created, eventually, watching } = fx;
  describe('pendingUntil, notified', () => {
    it('announces a run-ready with the pendingUntil the store set, and without one when the job has no pending timeout', () =>
      withStore((store) => {
        if (required) expect(typeof store.watch, 'store.watch').toBe('function');
        if (store.watch === undefined) return Promise.resolve();
        return watching(store, async (seen) => {
          await upsertJob(store, { spec: limited('a', 0, { pendingTimeoutMs: MINUTE }), now: T0, initialCursor: T0 });
          await upsertJob(store, { spec: limited('b', 0), now: T0, initialCursor: T0 });
          const a = await created(store, 'a', 1, T0 + MINUTE - 200);
          const b = await created(store, 'b', 1);
          await eventually(() => {
            expect(seen).toContainEqual({ type: 'run-ready', jobName: 'a', runId: a.id, readyAt: T0 + MINUTE, pendingUntil: T0 + 2 * MINUTE });
            expect(seen).toContainEqual({ type: 'run-ready', jobName: 'b', runId: b.id, readyAt: T0 + MINUTE });
          });
        });
      }));
  });
}

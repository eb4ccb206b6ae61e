/** Conformance: fan-out runs among the others: policies, manual runs, ready lists, notifications, pruning and removal. */
import type { StoreNotification } from '../../store.js';
import { ERROR, MINUTE, T0, type Fixture } from './fixtures.js';

export function fanOutRunTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, tick, claim, fanOutJob, created, claimIndex, finishIndex, watching, notified } = fx;

  describe('fan-out: runs among the others', () => {
    it('Replace cancels an active fan-out run with its unfinished indices, and fences their owners out', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 5 }, { concurrencyPolicy: 'Replace' });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p');
        const i1 = await claimIndex(store, run.id, 'q');
        await finishIndex(store, i1.index, { status: 'retry', error: ERROR, readyAt: T0 + 9 * MINUTE }, T0 + MINUTE);
        const result = await tick(store, 'f', 2);
        expect(result.outcome).toBe('created');
        if (result.outcome !== 'created') return;
        expect(result.cancelled.map((r) => r.id)).toEqual([run.id]);
        expect(result.cancelled[0]).toMatchObject({ status: 'cancelled', finishedAt: T0 + 2 * MINUTE });
        expect(result.cancelled[0]?.fanOut).toMatchObject({ active: 0, failed: 1 });
        expect(await store.getRun(run.id)).toMatchObject({ status: 'cancelled', finishedAt: T0 + 2 * MINUTE });
        expect((await store.listIndices(run.id)).map((r) => [r.index, r.status, r.finishedAt])).toEqual([
          [0, 'cancelled', T0 + 2 * MINUTE],
          [1, 'cancelled', T0 + 2 * MINUTE],
        ]);
        const lease = { runId: run.id, index: 0, owner: 'p', fence: i0.index.fence, now: T0 + 2 * MINUTE };
        expect(await store.renewLease({ ...lease, leaseUntil: T0 + 3 * MINUTE })).toEqual({ ok: false, status: 'cancelled' });
        expect((await store.finishAttempt({ ...lease, outcome: { status: 'succeeded' } })).ok).toBe(false);
        expect(await store.getJob('f')).toMatchObject({ succeeded: 0, failed: 0 });
        expect(result.run.fanOut).toEqual({ completions: 3, parallelism: 3, retryLimit: 5, succeeded: 0, failed: 0, active: 0 });
      }));

    it('Forbid and CatchUp see a fan-out run as active while an index runs and while it waits between indices', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'forbid', { completions: 2, parallelism: 1 }, { concurrencyPolicy: 'Forbid' });
        await fanOutJob(store, 'catchup', { completions: 2, parallelism: 1 }, { concurrencyPolicy: 'CatchUp' });
        const forbid = await created(store, 'forbid', 1);
        const catchup = await created(store, 'catchup', 1);
        await claimIndex(store, catchup.id, 'q');
        const f0 = await claimIndex(store, forbid.id, 'p');
        expect((await tick(store, 'forbid', 2)).outcome).toBe('skipped');
        expect((await tick(store, 'catchup', 2)).outcome).toBe('blocked');
        await finishIndex(store, f0.index, { status: 'succeeded' }, T0 + 3 * MINUTE);
        expect((await store.getRun(forbid.id))?.status).toBe('pending');
        expect((await tick(store, 'forbid', 3)).outcome).toBe('skipped');
        expect(await store.getJob('forbid')).toMatchObject({ skipped: 2 });
        const f1 = await claimIndex(store, forbid.id, 'p', T0 + 3 * MINUTE);
        await finishIndex(store, f1.index, { status: 'succeeded' }, T0 + 4 * MINUTE);
        expect((await tick(store, 'forbid', 4)).outcome).toBe('created');
        expect((await tick(store, 'catchup', 2, T0 + 4 * MINUTE)).outcome).toBe('blocked');
      }));

    it('creates manual and backfill runs of a fan-out job as fan-out runs', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 4, parallelism: 2, retryLimit: 0 });
        const manual = await store.createRun({ run: { id: 'f.manual.1', jobName: 'f', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        expect(manual.outcome === 'created' && manual.run.fanOut).toEqual({ completions: 4, parallelism: 2, retryLimit: 0, succeeded: 0, failed: 0, active: 0 });
        await store.addBackfill({ jobName: 'f', range: { id: 'b', next: T0 - MINUTE, to: T0 - MINUTE } });
        const backfill = await store.scheduleBackfillRun({
          jobName: 'f', backfillId: 'b', expectedNext: T0 - MINUTE, now: T0,
          run: { id: `f.backfill.${(T0 - MINUTE) / 1000}`, jobName: 'f', scheduledAt: T0 - MINUTE, trigger: 'backfill', readyAt: T0 },
        });
        expect(backfill.outcome === 'created' && backfill.run.fanOut).toMatchObject({ completions: 4, active: 0 });
        // A plain job's runs have no fan-out.
        await job(store, 'a');
        expect((await created(store, 'a', 1)).fanOut).toBeUndefined();
      }));

    it('finds claimable fan-out runs, even while running, and wakes up for their waiting indices', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'wide', { completions: 2, parallelism: 2, retryLimit: 5 });
        await fanOutJob(store, 'narrow', { completions: 2, parallelism: 1 });
        await job(store, 'a');
        const wide = await created(store, 'wide', 1);
        const narrow = await created(store, 'narrow', 1);
        const plain = await created(store, 'a', 2);
        const names = new Set(['wide', 'narrow', 'a']);
        const w0 = await claimIndex(store, wide.id, 'p', T0 + 2 * MINUTE);
        await claimIndex(store, narrow.id, 'p', T0 + 2 * MINUTE);
        // wide runs one index of two (claimable); narrow runs its only allowed one (not claimable).
        let found = await store.findReadyRuns({ jobNames: names, now: T0 + 2 * MINUTE, limit: 10 });
        expect(found.runs.map((r) => r.id)).toEqual([wide.id, plain.id]);
        expect(found.runs[0]).toMatchObject({ status: 'running', readyAt: T0 + MINUTE });
        expect(found.nextReadyAt).toBeUndefined();

        const w1 = await claimIndex(store, wide.id, 'q', T0 + 2 * MINUTE);
        await claim(store, plain.id, 'q', T0 + 2 * MINUTE);
        expect((await store.findReadyRuns({ jobNames: names, now: T0 + 2 * MINUTE, limit: 10 })).runs).toEqual([]);

        await finishIndex(store, w1.index, { status: 'retry', error: ERROR, readyAt: T0 + 7 * MINUTE }, T0 + 3 * MINUTE);
        await finishIndex(store, w0.index, { status: 'retry', error: ERROR, readyAt: T0 + 5 * MINUTE }, T0 + 3 * MINUTE);
        found = await store.findReadyRuns({ jobNames: names, now: T0 + 3 * MINUTE, limit: 10 });
        expect(found.runs).toEqual([]);
        expect(found.nextReadyAt).toBe(T0 + 5 * MINUTE);
        found = await store.findReadyRuns({ jobNames: names, now: T0 + 5 * MINUTE, limit: 10 });
        expect(found.runs.map((r) => [r.id, r.readyAt])).toEqual([[wide.id, T0 + 5 * MINUTE]]);
        expect((await store.findReadyRuns({ jobNames: new Set(['a']), now: T0 + 5 * MINUTE, limit: 10 })).runs).toEqual([]);
      }));

    it('tells watchers when a fan-out run is left claimable, and once when it finishes', () =>
      withStore(async (store) => {
        await watching(store, async (seen) => {
          await fanOutJob(store, 'f', { completions: 2, parallelism: 2, retryLimit: 5 });
          const run = await created(store, 'f', 1);
          const i0 = await claimIndex(store, run.id, 'p');
          const i1 = await claimIndex(store, run.id, 'q');
          await finishIndex(store, i0.index, { status: 'retry', error: ERROR, readyAt: T0 + 3 * MINUTE }, T0 + 2 * MINUTE);
          await finishIndex(store, i1.index, { status: 'retry', error: ERROR, readyAt: T0 + 4 * MINUTE }, T0 + 2 * MINUTE);
          // Claiming index 0 leaves index 1 to claim, ready at +4.
          const again0 = await claimIndex(store, run.id, 'p', T0 + 3 * MINUTE);
          const again1 = await claimIndex(store, run.id, 'q', T0 + 4 * MINUTE);
          await finishIndex(store, again0.index, { status: 'released' }, T0 + 5 * MINUTE);
          const last0 = await claimIndex(store, run.id, 'p', T0 + 5 * MINUTE);
          await finishIndex(store, last0.index, { status: 'succeeded' }, T0 + 6 * MINUTE);
          await finishIndex(store, again1.index, { status: 'succeeded' }, T0 + 6 * MINUTE);
          const ready = (readyAt: number) => ({ type: 'run-ready', jobName: 'f', runId: run.id, readyAt });
          const finished = { type: 'run-finished', jobName: 'f', runId: run.id, status: 'succeeded' };
          await notified(store, () => {
            expect(seen).toContainEqual(ready(T0 + MINUTE));
            expect(seen).toContainEqual(ready(T0 + 3 * MINUTE));
            expect(seen).toContainEqual(ready(T0 + 4 * MINUTE));
            expect(seen).toContainEqual(ready(T0 + 5 * MINUTE));
            expect(seen).toContainEqual(finished);
            expect(seen.filter((n: StoreNotification) => n.type === 'run-finished' && n.runId === run.id)).toHaveLength(1);
          });
        });
      }));

    it('deletes the index records of runs deleted by pruning and by removeJob', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 }, { history: { succeeded: 1, failed: 1 } });
        const first = await created(store, 'f', 1);
        for (const owner of ['p', 'q']) {
          const { index } = await claimIndex(store, first.id, owner);
          await finishIndex(store, index, { status: 'succeeded' }, T0 + 2 * MINUTE);
        }
        expect(await store.listIndices(first.id)).toHaveLength(2);
        const second = await created(store, 'f', 3);
        for (const owner of ['p', 'q']) {
          const { index } = await claimIndex(store, second.id, owner, T0 + 3 * MINUTE);
          await finishIndex(store, index, { status: 'succeeded' }, T0 + 4 * MINUTE);
        }
        expect(await store.getRun(first.id)).toBeUndefined();
        expect(await store.listIndices(first.id)).toEqual([]);
        expect(await store.listIndices(second.id)).toHaveLength(2);
        const third = await created(store, 'f', 5);
        await claimIndex(store, third.id, 'p', T0 + 5 * MINUTE);
        expect(await store.removeJob('f')).toBe(true);
        expect(await store.listIndices(second.id)).toEqual([]);
        expect(await store.listIndices(third.id)).toEqual([]);
      }));
  });
}

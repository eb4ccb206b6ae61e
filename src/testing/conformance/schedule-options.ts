/** Conformance: the schedule options a store keeps or decides: window, jitter and maxRuns in the spec, the run count, BufferOne. */
import type { NewRun } from '../../store.js';
import { MINUTE, T0, scheduled, spec, upsertJob, type Fixture } from './fixtures.js';

export function scheduleOptionTests(fx: Fixture): void {
  const { describe, it, expect, withStore, job, tick, claim, succeed, created } = fx;
  describe('schedule options', () => {
    it('keeps startAt, endAt, jitterMs and maxRuns in the spec, and drops them when a new spec has none', () =>
      withStore(async (store) => {
        const options = { startAt: T0 + MINUTE, endAt: T0 + 60 * MINUTE, jitterMs: 30_000, maxRuns: 5 };
        const { job: first } = await upsertJob(store, { spec: { ...spec('a'), ...options }, now: T0, initialCursor: T0 });
        expect(first).toMatchObject({ ...options, scheduledRuns: 0 });
        expect(await store.getJob('a')).toMatchObject(options);
        const { job: plain } = await upsertJob(store, { spec: spec('a'), now: T0, initialCursor: T0 });
        expect(Object.keys(options).filter((key) => key in plain)).toEqual([]);
        expect(await store.getJob('a')).toEqual(plain);
      }));

    it('counts scheduled runs as it creates them, and only those; re-registering keeps the count', () =>
      withStore(async (store) => {
        await job(store, 'a', 'Forbid');
        const run = await created(store, 'a', 1);
        expect((await store.getJob('a'))?.scheduledRuns).toBe(1);
        expect((await tick(store, 'a', 2)).outcome).toBe('skipped'); // Forbid: a skipped tick is no run
        await store.createRun({ run: { id: 'a.manual.k', jobName: 'a', scheduledAt: T0, trigger: 'manual', readyAt: T0 }, now: T0 });
        await store.addBackfill({ jobName: 'a', range: { id: 'b', next: T0 - MINUTE, to: T0 - MINUTE } });
        await succeed(store, await claim(store, run.id, 'a', T0 + 2 * MINUTE), T0 + 2 * MINUTE);
        await succeed(store, await claim(store, 'a.manual.k', 'a', T0 + 2 * MINUTE), T0 + 2 * MINUTE);
        const backfill: NewRun = { id: `a.backfill.${(T0 - MINUTE) / 1000}`, jobName: 'a', scheduledAt: T0 - MINUTE, trigger: 'backfill', readyAt: T0 + 2 * MINUTE };
        expect((await store.scheduleBackfillRun({ jobName: 'a', backfillId: 'b', expectedNext: T0 - MINUTE, run: backfill, now: T0 + 2 * MINUTE })).outcome).toBe('created');
        const current = await store.getJob('a');
        // A run whose ID exists is not created again, so not counted again.
        const again = await store.scheduleRun({ jobName: 'a', expectedCursor: current?.cursor ?? 0, cursor: T0 + MINUTE * 3, run: { ...scheduled('a', T0 + MINUTE), id: run.id }, now: T0 + 3 * MINUTE });
        expect(again.outcome).toBe('exists');
        expect((await store.getJob('a'))?.scheduledRuns).toBe(1);
        const { job: updated } = await upsertJob(store, { spec: { ...spec('a'), maxRuns: 9 }, now: T0, initialCursor: T0 });
        expect(updated.scheduledRuns).toBe(1);
      }));

    it('creates no run once scheduledRuns reaches maxRuns, but still moves the cursor without one', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: { ...spec('a'), maxRuns: 2 }, now: T0, initialCursor: T0 });
        await created(store, 'a', 1);
        await created(store, 'a', 2);
        expect((await store.getJob('a'))?.scheduledRuns).toBe(2);
        const refused = await tick(store, 'a', 3);
        expect(refused.outcome).toBe('conflict');
        expect(await store.getJob('a')).toMatchObject({ cursor: T0 + 2 * MINUTE, scheduledRuns: 2 });
        expect(await store.getRun(`a.${(T0 + 3 * MINUTE) / 1000}`)).toBeUndefined();
        const advanced = await store.scheduleRun({ jobName: 'a', expectedCursor: T0 + 2 * MINUTE, cursor: T0 + 3 * MINUTE, now: T0 + 3 * MINUTE });
        expect(advanced.outcome).toBe('advanced');
        // A higher limit on re-registration lets the count go on.
        await upsertJob(store, { spec: { ...spec('a'), maxRuns: 3 }, now: T0, initialCursor: T0 });
        expect((await tick(store, 'a', 4)).outcome).toBe('created');
        expect((await store.getJob('a'))?.scheduledRuns).toBe(3);
      }));

    it('creates a run ready at its readyAt when given (a jittered run), its pending timeout counted from then', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: { ...spec('a'), pendingTimeoutMs: MINUTE, jitterMs: 30_000 }, now: T0, initialCursor: T0 });
        const at = T0 + MINUTE;
        const result = await store.scheduleRun({ jobName: 'a', expectedCursor: T0, cursor: at, run: { ...scheduled('a', at), readyAt: at + 20_000 }, now: at });
        expect(result.outcome).toBe('created');
        if (result.outcome !== 'created') return;
        expect(result.run).toMatchObject({ scheduledAt: at, readyAt: at + 20_000, pendingUntil: at + 20_000 + MINUTE });
        const early = await store.findReadyRuns({ jobNames: new Set(['a']), now: at + 10_000, limit: 10 });
        expect(early).toEqual({ runs: [], nextReadyAt: at + 20_000 });
        expect(await store.claimRun({ runId: result.run.id, owner: 'o', now: at + 19_999, leaseUntil: at + MINUTE })).toBeUndefined();
        expect((await store.claimRun({ runId: result.run.id, owner: 'o', now: at + 20_000, leaseUntil: at + MINUTE }))?.run.status).toBe('running');
        // A readyAt already passed is kept as given (the core decides it; the store never moves it), and
        // the run is claimable at once, its pending timeout counted from now.
        const late = await store.scheduleRun({ jobName: 'a', expectedCursor: at, cursor: at + MINUTE, run: { ...scheduled('a', at + MINUTE), readyAt: at + MINUTE + 1 }, now: at + 2 * MINUTE });
        expect(late.outcome === 'created' && late.run).toMatchObject({ readyAt: at + MINUTE + 1, pendingUntil: at + 3 * MINUTE });
        expect((await store.findReadyRuns({ jobNames: new Set(['a']), now: at + 2 * MINUTE, limit: 10 })).runs.map((r) => r.id)).toEqual([`a.${(at + MINUTE) / 1000}`]);
      }));

    it('BufferOne writes nothing while a run is active, and creates the run once it finished', () =>
      withStore(async (store) => {
        await job(store, 'a', 'BufferOne');
        const first = await created(store, 'a', 1);
        const blocked = await tick(store, 'a', 2);
        expect(blocked.outcome).toBe('blocked');
        expect(blocked.outcome === 'blocked' && blocked.active).toEqual([first.id]);
        expect(await store.getJob('a')).toMatchObject({ cursor: T0 + MINUTE, skipped: 0, scheduledRuns: 1 });
        expect(await store.listRuns({ jobName: 'a' })).toHaveLength(1);
        await succeed(store, await claim(store, first.id, 'a', T0 + 2 * MINUTE), T0 + 2 * MINUTE);
        const buffered = await tick(store, 'a', 3, T0 + 3 * MINUTE);
        expect(buffered.outcome).toBe('created');
        expect(await store.getJob('a')).toMatchObject({ cursor: T0 + 3 * MINUTE, scheduledRuns: 2 });
      }));
  });
}

/** Conformance: pending timeouts (`pendingUntil`, `expirePendingRuns`) and history TTL (`expiresAt`, `deleteExpiredRuns`). */
import { PENDING_TIMEOUT_ERROR, type JobSpec } from '../../store.js';
import { ERROR, MINUTE, T0, fanOutSpec, spec, upsertJob, type Fixture } from './fixtures.js';

export function expiryTests(fx: Fixture): void {
  const { describe, it, expect, withStore, tick, claim, succeed, fanOutJob, created, claimIndex, finishIndex, watching, notified } = fx;
  const TIMEOUT = 5 * MINUTE;
  const TTL = 60 * MINUTE;

  function plain(name: string, extra: Partial<JobSpec> = {}): JobSpec {
    return { ...spec(name, 'Allow', { succeeded: 3, failed: 3 }), ...extra };
  }

  describe('pending timeout', () => {
    it('keeps pendingUntil on a plain run while it is claimable, from max(readyAt, now)', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: plain('a', { pendingTimeoutMs: TIMEOUT }), now: T0, initialCursor: T0 });
        const run = await created(store, 'a', 1);
        expect(run.pendingUntil).toBe(T0 + MINUTE + TIMEOUT);
        let mine = await claim(store, run.id, 'p', T0 + 2 * MINUTE);
        expect(mine.pendingUntil).toBeUndefined();
        expect((await store.getRun(run.id))?.pendingUntil).toBeUndefined();
        // A retry later than now: from its readyAt.
        const retry = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now: T0 + 3 * MINUTE, outcome: { status: 'retry', error: ERROR, readyAt: T0 + 10 * MINUTE } });
        expect(retry.ok && retry.run.pendingUntil).toBe(T0 + 10 * MINUTE + TIMEOUT);
        mine = await claim(store, run.id, 'p', T0 + 10 * MINUTE);
        // A retry already due: from now.
        const due = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now: T0 + 12 * MINUTE, outcome: { status: 'retry', error: ERROR, readyAt: T0 + 11 * MINUTE } });
        expect(due.ok && due.run.pendingUntil).toBe(T0 + 12 * MINUTE + TIMEOUT);
        mine = await claim(store, run.id, 'p', T0 + 13 * MINUTE);
        const released = await store.finishAttempt({ runId: run.id, owner: 'p', fence: mine.fence, now: T0 + 14 * MINUTE, outcome: { status: 'released' } });
        expect(released.ok && released.run.pendingUntil).toBe(T0 + 14 * MINUTE + TIMEOUT);
        mine = await claim(store, run.id, 'p', T0 + 15 * MINUTE, 10_000);
        const recovered = await store.recoverExpiredRuns({ now: T0 + 16 * MINUTE, limit: 10 });
        expect(recovered[0]?.pendingUntil).toBe(T0 + 16 * MINUTE + TIMEOUT);
        mine = await claim(store, run.id, 'p', T0 + 17 * MINUTE);
        const done = await succeed(store, mine, T0 + 18 * MINUTE);
        expect(done.ok && done.run.pendingUntil).toBeUndefined();
        expect((await store.getRun(run.id))?.pendingUntil).toBeUndefined();
      }));

    it('sets no pendingUntil when the job has no pending timeout', () =>
      withStore(async (store) => {
        await fx.job(store, 'a');
        await fanOutJob(store, 'f');
        expect((await created(store, 'a', 1)).pendingUntil).toBeUndefined();
        const run = await created(store, 'f', 1);
        expect(run.pendingUntil).toBeUndefined();
        expect((await claimIndex(store, run.id)).run.pendingUntil).toBeUndefined();
        expect(await store.expirePendingRuns({ now: T0 + 1_000 * MINUTE, limit: 10 })).toEqual({ runs: [] });
      }));

    it('keeps pendingUntil on a fan-out run while an index can be claimed, and resets it on every write', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 2, retryLimit: 5 }, { pendingTimeoutMs: TIMEOUT });
        const run = await created(store, 'f', 1);
        expect(run.pendingUntil).toBe(T0 + MINUTE + TIMEOUT);
        // Still claimable after the first claim: reset from now (readyAt is the run's createdAt).
        const i0 = await claimIndex(store, run.id, 'p', T0 + 2 * MINUTE);
        expect(i0.run.pendingUntil).toBe(T0 + 2 * MINUTE + TIMEOUT);
        // parallelism reached: not claimable.
        const i1 = await claimIndex(store, run.id, 'q', T0 + 3 * MINUTE);
        expect(i1.run.pendingUntil).toBeUndefined();
        const done0 = await finishIndex(store, i0.index, { status: 'succeeded' }, T0 + 4 * MINUTE);
        expect(done0.ok && done0.run.pendingUntil).toBe(T0 + 4 * MINUTE + TIMEOUT);
        const i2 = await claimIndex(store, run.id, 'r', T0 + 4 * MINUTE);
        expect(i2.index.index).toBe(2);
        expect(i2.run.pendingUntil).toBeUndefined();
        const retried = await finishIndex(store, i1.index, { status: 'retry', error: ERROR, readyAt: T0 + 4 * MINUTE + 10 }, T0 + 4 * MINUTE + 10);
        expect(retried.ok && retried.run.pendingUntil).toBe(T0 + 4 * MINUTE + 10 + TIMEOUT);
        // Renewing an index's lease is not a write to the run.
        const renewed = await store.renewLease({ runId: run.id, index: 2, owner: 'r', fence: i2.index.fence, now: T0 + 4 * MINUTE + 20, leaseUntil: T0 + 7 * MINUTE });
        expect(renewed.ok).toBe(true);
        expect((await store.getRun(run.id))?.pendingUntil).toBe(T0 + 4 * MINUTE + 10 + TIMEOUT);
        // Every index started and none waits: not claimable.
        const again1 = await claimIndex(store, run.id, 'q', T0 + 5 * MINUTE);
        expect(again1.run.pendingUntil).toBeUndefined();
        await finishIndex(store, again1.index, { status: 'succeeded' }, T0 + 21 * MINUTE);
        expect((await store.getRun(run.id))?.pendingUntil).toBeUndefined();
      }));

    it('fails claimable runs whose pendingUntil passed, earliest first, with counters, notification and the next deadline', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: plain('a', { pendingTimeoutMs: TIMEOUT, history: { succeeded: 3, failed: 1 } }), now: T0, initialCursor: T0 });
        await upsertJob(store, { spec: plain('b', { pendingTimeoutMs: 2 * TIMEOUT }), now: T0, initialCursor: T0 });
        await watching(store, async (seen) => {
          const a1 = await created(store, 'a', 1); // until +6
          const a2 = await created(store, 'a', 2); // until +7
          const b1 = await created(store, 'b', 1, T0 + 2 * MINUTE); // until +12
          const a3 = await created(store, 'a', 3); // claimed: never expires
          await claim(store, a3.id, 'p', T0 + 3 * MINUTE);

          expect(await store.expirePendingRuns({ now: T0 + 6 * MINUTE - 1, limit: 10 })).toEqual({ runs: [], nextAt: T0 + 6 * MINUTE });
          const first = await store.expirePendingRuns({ now: T0 + 8 * MINUTE, limit: 1 });
          expect(first.runs.map((r) => r.id)).toEqual([a1.id]);
          expect(first.runs[0]).toMatchObject({ status: 'failed', finishedAt: T0 + 8 * MINUTE, error: PENDING_TIMEOUT_ERROR, attempt: 1 });
          expect(first.runs[0]?.pendingUntil).toBeUndefined();
          // a2's deadline passed too, but the limit left it for the next call.
          expect(first.nextAt).toBe(T0 + 7 * MINUTE);
          expect(await store.getJob('a')).toMatchObject({ failed: 1, succeeded: 0 });

          const second = await store.expirePendingRuns({ now: T0 + 8 * MINUTE, limit: 10 });
          expect(second.runs.map((r) => r.id)).toEqual([a2.id]);
          expect(second.nextAt).toBe(T0 + 12 * MINUTE);
          expect(await store.getJob('a')).toMatchObject({ failed: 2 });
          // Pruned like any final failure: history keeps one failed run.
          expect(await store.getRun(a1.id)).toBeUndefined();
          expect(await store.getRun(a3.id)).toMatchObject({ status: 'running' });
          await notified(store, () => {
            expect(seen).toContainEqual({ type: 'run-finished', jobName: 'a', runId: a2.id, status: 'failed' });
          });
          const last = await store.expirePendingRuns({ now: T0 + 12 * MINUTE, limit: 10 });
          expect(last.runs.map((r) => r.id)).toEqual([b1.id]);
          expect(last.nextAt).toBeUndefined();
          expect(await store.claimRun({ runId: b1.id, owner: 'p', now: T0 + 12 * MINUTE, leaseUntil: T0 + 13 * MINUTE })).toBeUndefined();
        });
      }));

    it('orders runs with the same pendingUntil by ID', () =>
      withStore(async (store) => {
        await upsertJob(store, { spec: plain('b', { pendingTimeoutMs: TIMEOUT }), now: T0, initialCursor: T0 });
        await upsertJob(store, { spec: plain('a', { pendingTimeoutMs: TIMEOUT }), now: T0, initialCursor: T0 });
        const b = await created(store, 'b', 1);
        const a = await created(store, 'a', 1);
        const result = await store.expirePendingRuns({ now: T0 + 10 * MINUTE, limit: 10 });
        expect(result.runs.map((r) => r.id)).toEqual([a.id, b.id]);
      }));

    it('fails a fan-out run left unclaimed, cancelling its running indices', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 3, parallelism: 3, retryLimit: 5 }, { pendingTimeoutMs: TIMEOUT });
        const run = await created(store, 'f', 1);
        const i0 = await claimIndex(store, run.id, 'p', T0 + 2 * MINUTE);
        expect(i0.run.pendingUntil).toBe(T0 + 7 * MINUTE);
        expect((await store.expirePendingRuns({ now: T0 + 7 * MINUTE - 1, limit: 10 })).runs).toEqual([]);
        const result = await store.expirePendingRuns({ now: T0 + 7 * MINUTE, limit: 10 });
        expect(result.runs.map((r) => r.id)).toEqual([run.id]);
        expect(result.runs[0]).toMatchObject({ status: 'failed', finishedAt: T0 + 7 * MINUTE, error: PENDING_TIMEOUT_ERROR });
        expect(result.runs[0]?.fanOut).toMatchObject({ active: 0, failed: 0, succeeded: 0 });
        expect(await store.listIndices(run.id)).toHaveLength(1);
        expect((await store.listIndices(run.id))[0]).toMatchObject({ status: 'cancelled', finishedAt: T0 + 7 * MINUTE });
        const late = await finishIndex(store, i0.index, { status: 'succeeded' }, T0 + 8 * MINUTE);
        expect(late.ok).toBe(false);
        expect(await store.getJob('f')).toMatchObject({ failed: 1, succeeded: 0 });
      }));

    it('never expires a fan-out run while its indices fill parallelism', () =>
      withStore(async (store) => {
        await fanOutJob(store, 'f', { completions: 2, parallelism: 1 }, { pendingTimeoutMs: TIMEOUT });
        const run = await created(store, 'f', 1);
        await claimIndex(store, run.id, 'p', T0 + 2 * MINUTE, 60 * MINUTE);
        expect(await store.expirePendingRuns({ now: T0 + 30 * MINUTE, limit: 10 })).toEqual({ runs: [] });
        expect((await store.getRun(run.id))?.status).toBe('running');
      }));
  });

  describe('history TTL', () => {
    it('sets expiresAt on every final write when the job has a TTL, and only then', () =>
      withStore(async (store) => {
        const history = { succeeded: 5, failed: 5, ttlMs: TTL };
        await upsertJob(store, { spec: plain('a', { history, pendingTimeoutMs: TIMEOUT }), now: T0, initialCursor: T0 });
        await upsertJob(store, { spec: plain('r', { history, concurrencyPolicy: 'Replace' }), now: T0, initialCursor: T0 });
        await fanOutJob(store, 'f', { completions: 2, parallelism: 2 }, { history });
        await fx.job(store, 'none');

        const ok = await created(store, 'a', 1);
        const mine = await claim(store, ok.id, 'p', T0 + MINUTE);
        expect(mine.expiresAt).toBeUndefined();
        const retried = await store.finishAttempt({ runId: ok.id, owner: 'p', fence: mine.fence, now: T0 + 2 * MINUTE, outcome: { status: 'retry', error: ERROR, readyAt: T0 + 2 * MINUTE } });
        expect(retried.ok && retried.run.expiresAt).toBeUndefined();
        const again = await claim(store, ok.id, 'p', T0 + 2 * MINUTE);
        const done = await succeed(store, again, T0 + 3 * MINUTE);
        expect(done.ok && done.run.expiresAt).toBe(T0 + 3 * MINUTE + TTL);

        const bad = await created(store, 'a', 2);
        const badMine = await claim(store, bad.id, 'p', T0 + 2 * MINUTE);
        const failed = await store.finishAttempt({ runId: bad.id, owner: 'p', fence: badMine.fence, now: T0 + 4 * MINUTE, outcome: { status: 'failed', error: ERROR } });
        expect(failed.ok && failed.run.expiresAt).toBe(T0 + 4 * MINUTE + TTL);

        const late = await created(store, 'a', 3);
        const expired = await store.expirePendingRuns({ now: T0 + 9 * MINUTE, limit: 10 });
        expect(expired.runs.map((r) => [r.id, r.expiresAt])).toEqual([[late.id, T0 + 9 * MINUTE + TTL]]);

        const replaced = await created(store, 'r', 1);
        const replacing = await tick(store, 'r', 2, T0 + 5 * MINUTE);
        expect(replacing.outcome === 'created' && replacing.cancelled.map((r) => r.expiresAt)).toEqual([T0 + 5 * MINUTE + TTL]);
        expect((await store.getRun(replaced.id))?.expiresAt).toBe(T0 + 5 * MINUTE + TTL);

        const fan = await created(store, 'f', 1);
        const f0 = await claimIndex(store, fan.id, 'p');
        const f1 = await claimIndex(store, fan.id, 'q');
        const half = await finishIndex(store, f0.index, { status: 'succeeded' }, T0 + 6 * MINUTE);
        expect(half.ok && half.run.expiresAt).toBeUndefined();
        const whole = await finishIndex(store, f1.index, { status: 'succeeded' }, T0 + 7 * MINUTE);
        expect(whole.ok && whole.run.expiresAt).toBe(T0 + 7 * MINUTE + TTL);

        const kept = await created(store, 'none', 1);
        const keptDone = await succeed(store, await claim(store, kept.id, 'p'), T0 + 2 * MINUTE);
        expect(keptDone.ok && keptDone.run.expiresAt).toBeUndefined();
      }));

    it('deletes only finished runs whose expiresAt passed, earliest first, at most limit, with their index records', () =>
      withStore(async (store) => {
        const history = { succeeded: 10, failed: 10, ttlMs: TTL };
        await upsertJob(store, { spec: plain('a', { history }), now: T0, initialCursor: T0 });
        await upsertJob(store, { spec: fanOutSpec('f', { completions: 2, parallelism: 2 }, { history }), now: T0, initialCursor: T0 });
        const fan = await created(store, 'f', 1);
        for (const owner of ['p', 'q']) {
          const { index } = await claimIndex(store, fan.id, owner);
          await finishIndex(store, index, { status: 'succeeded' }, T0 + 2 * MINUTE); // expires +62
        }
        const a1 = await created(store, 'a', 1);
        await succeed(store, await claim(store, a1.id, 'p', T0 + MINUTE), T0 + 3 * MINUTE); // expires +63
        const a2 = await created(store, 'a', 2);
        const a2Mine = await claim(store, a2.id, 'p', T0 + 2 * MINUTE);
        await store.finishAttempt({ runId: a2.id, owner: 'p', fence: a2Mine.fence, now: T0 + 4 * MINUTE, outcome: { status: 'failed', error: ERROR } }); // +64
        const a3 = await created(store, 'a', 3); // still pending
        const a4 = await created(store, 'a', 4);
        await succeed(store, await claim(store, a4.id, 'p', T0 + 4 * MINUTE), T0 + 30 * MINUTE); // +90

        expect(await store.deleteExpiredRuns({ now: T0 + 62 * MINUTE - 1, limit: 10 })).toBe(0);
        expect(await store.deleteExpiredRuns({ now: T0 + 64 * MINUTE, limit: 1 })).toBe(1);
        expect(await store.getRun(fan.id)).toBeUndefined();
        expect(await store.listIndices(fan.id)).toEqual([]);
        expect(await store.getRun(a1.id)).toBeDefined();
        expect(await store.deleteExpiredRuns({ now: T0 + 64 * MINUTE, limit: 10 })).toBe(2);
        expect((await store.listRuns({ jobName: 'a' })).map((r) => r.id)).toEqual([a4.id, a3.id]);
        expect(await store.deleteExpiredRuns({ now: T0 + 1_000 * MINUTE, limit: 10 })).toBe(1);
        expect((await store.listRuns({ jobName: 'a' })).map((r) => r.id)).toEqual([a3.id]);
        // The job's counters are history, not runs: deleting runs keeps them.
        expect(await store.getJob('a')).toMatchObject({ succeeded: 2, failed: 1 });
      }));
  });

  describe('sweepRuns (optional)', () => {
    it('resolves what recoverExpiredRuns, expirePendingRuns and deleteExpiredRuns resolve one after the other', () =>
      withStore(async (swept) =>
        withStore(async (called) => {
          if (swept.sweepRuns === undefined) return; // optional: the scheduler makes the three calls
          const setUp = async (store: typeof swept): Promise<void> => {
            const history = { succeeded: 10, failed: 10, ttlMs: TTL };
            await upsertJob(store, { spec: plain('a', { pendingTimeoutMs: TIMEOUT, history, retryLimit: 1 }), now: T0, initialCursor: T0 });
            for (const minutes of [1, 2]) await claim(store, (await created(store, 'a', minutes)).id, 'p', T0 + minutes * MINUTE, 10_000); // lease lost
            for (const minutes of [3, 4]) await created(store, 'a', minutes); // pending until +8, +9
            await succeed(store, await claim(store, (await created(store, 'a', 5)).id, 'p', T0 + 5 * MINUTE), T0 + 5 * MINUTE); // expires +65
            await succeed(store, await claim(store, (await created(store, 'a', 6)).id, 'p', T0 + 6 * MINUTE), T0 + 6 * MINUTE); // expires +66
          };
          await setUp(swept);
          await setUp(called);
          for (const input of [{ now: T0 + 70 * MINUTE, limit: 1 }, { now: T0 + 70 * MINUTE, limit: 10 }, { now: T0 + 80 * MINUTE, limit: 10 }]) {
            const recovered = await called.recoverExpiredRuns(input);
            const expired = await called.expirePendingRuns(input);
            const deleted = await called.deleteExpiredRuns(input);
            expect(await swept.sweepRuns(input)).toEqual({ recovered, expired, deleted });
          }
          expect(await swept.listRuns({ jobName: 'a' })).toEqual(await called.listRuns({ jobName: 'a' }));
        }),
      ));
  });
}
